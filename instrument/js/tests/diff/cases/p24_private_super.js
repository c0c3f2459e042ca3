// Pitfall 24: private fields and super work unchanged.
class A {
  #x = 1;
  static #s = 2;
  get() { return this.#x; }
  inc() { this.#x++; this.#x += 2; return this.#x; }
  has(o) { return #x in o; }
  m() { return "A"; }
  static s() { return A.#s; }
}
class B extends A {
  constructor() { super(); this.y = super.m(); }
  m() { return super.m() + "B"; }
}
var a = new A();
console.log(a.get(), a.inc(), a.has(a), a.has({}), new B().m(), new B().y, A.s());
