// Member writes in parameter defaults and class field initializers are logged through an
// arrow that holds the temporaries; `this`, `arguments`, `new.target` and evaluation order
// are the same.
// expect: w Object[*].q
// expect: w Object[*].r
// expect: w Object[*].cnt
// expect: w Object[*].viaThis
// expect: r Object[*].#p
// expect: w Object[*].dx
// expect: w Object[*].fa
const target = { cnt: 0 };
function f(a, b = (a.q = arguments.length), c = (target.cnt += 1), d = (target[b] = this && this.tag)) {
  return [a.q, b, c, d, new.target === undefined];
}
console.log(f({}), f.call({ tag: 't' }, {}, 7), f.length, f.name, target.cnt, target[7]);
function g(x = (target.r = new.target ? 'new' : 'call')) { return x; }
new g();
console.log(g(), target.r);
let order = [];
class K {
  static sv = (target.r = 'static ' + this.name);
  a = (order.push('a'), target.cnt++);
  b = (this.viaThis = order.push('b'));
  #p = 5;
  c = this.#p + (target[order.length] = this.constructor.name);
  d = () => (target.d = this.a);
}
const kk = new K();
kk.d();
console.log(JSON.stringify(kk), order.join(), target.r, JSON.stringify(target));
const objFn = ({ m(a = (target.m = super.toString === Object.prototype.toString)) { return a; } });
console.log(objFn.m(), target.m);
async function af(a = (target.af = 1)) { return a; }
function* gf(a = (target.gf = 2)) { yield a; }
af().then((v) => console.log('async', v, target.af));
console.log('gen', gf().next().value, target.gf);
function h(x, y = ([target.dx, target['d' + x]] = [x, arguments.length])) { return [y, target.dx, target.d5]; }
console.log(h(5), h(5, 'given'));
class P { e = ([target.fa, this.fb] = [this.constructor.name, 2]); }
console.log(JSON.stringify(new P()), target.fa);
