// Conformance: in record mode the runtime replaces `Proxy` with a wrapper that registers every
// proxy (so logging can name objects without running traps); it behaves like the native.
var p = new Proxy({ a: 1 }, {});
var r = Proxy.revocable({}, {});
r.revoke();
function t(f) { try { return f(); } catch (e) { return e.name; } }
console.log(p.a, Proxy.length, Proxy.name, typeof Proxy.prototype, "prototype" in Proxy,
  t(() => Proxy({}, {})), t(() => { class X extends Proxy {} return 1; }),
  t(() => new Proxy(1, {})), t(() => new Proxy.revocable({}, {})), t(() => r.proxy.x),
  Object.getOwnPropertyNames(Proxy).sort().join(), Object.getOwnPropertyNames(p).join());
