// kind: module
// Modern syntax survives and behaves the same: classes with private fields, async/await,
// generators, optional chaining, BigInt, import.meta, dynamic import().
// expect: await
class Counter {
  #n = 0n;
  static #made = 0;
  constructor() { Counter.#made++; }
  inc() { this.#n += 1n; return this.#n; }
  static made() { return Counter.#made; }
}
function* gen(n) { for (let i = 0; i < n; i++) yield i * 2; }
async function total(xs) { let s = 0; for (const x of xs) s += await x; return s; }
const c = new Counter();
c.inc(); c.inc();
const cfg = { a: { b: null } };
console.log(String(c.inc()), Counter.made(), [...gen(3)].join(), cfg.a?.b?.c ?? "dflt", cfg.z?.(), typeof import.meta.url);
console.log(await total([1, Promise.resolve(2), 3]), (await import("dep")).x, 2n ** 70n);
