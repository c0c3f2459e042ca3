// kind: module
// Pitfall 40: modules are parsed as modules (imports, import.meta, top-level await).
// expect: w Scope[*].count
import { x } from "dep";
let count = 0;
function bump() { count++; return count; }
console.log(x, typeof import.meta.url, bump(), bump());
export { bump };
