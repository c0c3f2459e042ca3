// Block-scoped captured bindings get a scope instance per block activation: every iteration
// of `for (let …)` (and of `for (const … of …)`) is its own `Scope[S]`; TDZ, closures and
// labels behave as before.
// expect-distinct: r Scope[*].i 3
// expect-distinct: r Scope[*].item 2
// expect-distinct: r Scope[*].z 2
// expect-distinct: r Scope[*].err 2
// expect-distinct: r Scope[*].w 2
const fns = [];
for (let i = 0; i < 3; i++) fns.push(() => i);
console.log(fns.map((f) => f()).join());
const items = [];
for (const item of ['a', 'b']) items.push(() => item);
console.log(items.map((f) => f()).join());
const zs = [];
for (var n = 0; n < 2; n++) { let z = n * 10; zs.push(() => z++); }
console.log(zs.map((f) => f() + f()).join());
const errs = [];
for (const m of ['e1', 'e2']) { try { throw m; } catch (err) { errs.push(() => err); } }
console.log(errs.map((f) => f()).join());
const withInit = [];
for (let j = 0, get = () => j; j < 2; j++) withInit.push(get);
console.log(withInit.map((f) => f()).join());
const noUpdate = [];
for (let j = 0; j < 3;) { noUpdate.push(() => j); j++; }
console.log(noUpdate.map((f) => f()).join());
const consts = [];
for (const c = 5; consts.length < 2;) consts.push(() => c);
console.log(consts.map((f) => f()).join());
outer: for (let p = 0; p < 3; p++) {
  for (let q = 0; q < 3; q++) {
    if (q === 1) continue outer;
    if (p === 2) break outer;
    fns.push(() => p + ':' + q);
  }
}
console.log(fns.slice(3).map((f) => f()).join());
{
  try { early(); } catch (e) { console.log('tdz', e.constructor.name); }
  let late = 'late';
  function early() { return late; }
  console.log(early());
}
for (const start of [0, 1]) {
  try {
    switch (start) {
      case 0:
        let sv = 'zero';
      case 1: {
        const get = () => sv;
        console.log('switch', get());
        sv = 'one';
        console.log(get());
      }
    }
  } catch (e) {
    console.log('switch tdz', start, e.constructor.name);
  }
}
const sw = [];
for (var si = 0; si < 2; si++) switch (si) { default: let w = si; sw.push(() => w); }
lbl: switch (sw.length) { case 2: { const c2 = () => sw; if (c2()) break lbl; } console.log('not reached'); }
console.log(sw.map((f) => f()).join(), eval('switch (1) { case 1: let e1 = 5; (() => e1)(); e1 + 1 }'));
for (const { a, b = () => a } of [{ a: 1 }, { a: 2 }]) console.log(b());
let total = 0;
for (let k in { x: 1, y: 2 }) setTimeout(() => { total++; console.log('timer', k, total); });
