// Pitfall 47 (service workers) is a proxy/runtime concern; JS side: code that feature-tests
// navigator still runs.
console.log(typeof navigator === "undefined" ? "no navigator" : "navigator");
