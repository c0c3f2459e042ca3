// Captured bindings that nothing writes after their declaration are not logged (a read cannot
// race without a write); written ones are, and so are declared bindings of functions whose
// activation spans several actions (async functions, generators).
// expect-not: r Scope[*].param
// expect-not: r Scope[*].fixed
// expect-not: r Scope[*].helper
// expect-not: r Scope[*].e
// expect: w Scope[*].caught
// expect: r Scope[*].counter
// expect: w Scope[*].counter
// expect: r Scope[*].late
// expect: w Scope[*].late
function make(param) {
  const fixed = param * 2;
  function helper() { return fixed + param; }
  let counter = 0;
  let caught;
  try { throw new Error('x'); } catch (e) { caught = () => e.message; }
  return () => [helper(), ++counter, caught()];
}
const f = make(3);
console.log(f().join(), f().join());
async function later() {
  const read = () => late;
  await null;
  let late = 'late';
  return read();
}
later().then((v) => console.log(v));
