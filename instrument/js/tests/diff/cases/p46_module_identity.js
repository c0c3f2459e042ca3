// kind: module
// Pitfall 46: import.meta.url and dynamic import() are unchanged.
// expect: await
console.log(import.meta.url);
const m = await import("dep");
console.log(m.x);
