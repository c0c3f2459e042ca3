// Private fields are logged as the location `#x` of their object (reads through `pr`, writes
// through W/X/Y with the key "#x"); `#x in o` and private methods are not logged.
// expect: r Object[*].#x
// expect: w Object[*].#x
// expect: r Object[*].#count
// expect: w Object[*].#count
// expect-not: r Object[*].#m
// expect-not: r Object[*].#acc
class Counter {
  #x = 1;
  #count = 0;
  static #instances = 0;
  y = this.#x + 1;
  #m() { return this.#x * 10; }
  get #acc() { return this.#count; }
  set #acc(v) { this.#count = v; }
  #fn = function () { return this === undefined ? 'undef' : typeof this; };
  constructor() { Counter.#instances++; }
  inc(o) {
    this.#x++;
    ++this.#x;
    this.#x += 2;
    this.#x **= 1;
    o.#count = this.#x;
    this.#acc = this.#acc + 1;
    (this).#x = (this).#x;
    return [this.#x, o.#count, this.#m(), this.#acc, this.#fn(), #x in o, #x in {}];
  }
  static n() { return Counter.#instances; }
  pick(list) { return list.map((c) => c.#x); }
  nullish(o) { return o?.#x; }
}
const a = new Counter();
const b = new Counter();
console.log(a.inc(b), b.inc(a), a.y, Counter.n(), a.pick([a, b]), a.nullish(null), a.nullish(b));
try {
  Counter.prototype.inc.call({}, a);
} catch (e) {
  console.log(e.constructor.name);
}
class Base { constructor(o) { return o; } }
class Stamp extends Base { #tag = 'stamped'; static get(o) { return o.#tag; } }
const plain = {};
new Stamp(plain);
console.log(Stamp.get(plain));
