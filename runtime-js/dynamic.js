// dynamic.js — `Function(…)`, `new Function(…)` and the AsyncFunction / GeneratorFunction /
// AsyncGeneratorFunction constructors (reached through `getPrototypeOf(async function(){})
// .constructor`): in record mode their code is instrumented like any dynamic code.
//
// The native constructor runs first, unchanged: it converts the arguments (each toString once),
// parses parameters and body separately and throws the native SyntaxError for bad input (an
// assembled text could otherwise be a valid script the native constructor rejects, such as a
// body that closes the function early). When it succeeds, the same text the native assembles,
// `(function (P\n) {\nB\n})`, goes through the instrumenter (`__shepherd.i`, a synchronous
// request to the proxy) and is evaluated with the native indirect eval, so the function closes
// over the global scope as a native one does. The function gets the native's `name`
// ('anonymous'; the expression itself is unnamed so no `anonymous` binding appears inside it)
// and prints the native's source text. Anything unexpected — instrumentation unavailable or
// failed, a result that is not a function — returns the native function.

// Instrumented dynamic functions -> the source text the native function would print.
const fnSources = new NativeWeakMap();

const DYNAMIC_KINDS = [
  ['Function', '', null],
  ['AsyncFunction', 'async ', async function () {}],
  ['GeneratorFunction', '', function* () {}],
  ['AsyncGeneratorFunction', 'async ', async function* () {}],
];

/** Builds the instrumented twin of `native` (made by a dynamic function constructor). */
function instrumentedFunction(native, prefix, star, args) {
  if (typeof api.i !== 'function') return native;
  const n = args.length;
  let params = '';
  for (let i = 0; i < n - 1; i++) params += (i > 0 ? ',' : '') + NativeString(args[i]);
  const body = n > 0 ? NativeString(args[n - 1]) : '';
  const head = prefix + 'function' + star + ' ';
  const text = '(' + head + '(' + params + '\n) {\n' + body + '\n})';
  let code;
  try {
    code = api.i(text, 'script');
  } catch (_) {
    return native;
  }
  if (typeof code !== 'string' || code === text) return native;
  let f;
  try {
    f = (0, nativeEval)(code);
  } catch (_) {
    return native;
  }
  if (typeof f !== 'function' || getProto(f) !== getProto(native)) return native;
  try {
    defProp(f, 'name', { value: 'anonymous', writable: false, enumerable: false, configurable: true });
  } catch (_) {
    return native;
  }
  wmSet(fnSources, f, prefix + 'function' + star + ' anonymous(' + params + '\n) {\n' + body + '\n}');
  return f;
}

function wrapFunctionCtor(name, prefix, sample) {
  let N;
  if (sample === null) {
    N = G.Function;
  } else {
    N = getProto(sample).constructor;
  }
  if (typeof N !== 'function') return;
  const proto = N.prototype;
  const star = name === 'GeneratorFunction' || name === 'AsyncGeneratorFunction' ? '*' : '';
  // Called with or without `new`: both create a function; subclasses (`class X extends
  // Function`) get the native construction with their own prototype.
  const Wrapped = function () {
    if (new.target !== undefined && new.target !== Wrapped) return rConstruct(N, arguments, new.target);
    const native = rConstruct(N, arguments, N);
    if (passive()) return native;
    return instrumentedFunction(native, prefix, star, arguments);
  };
  defProp(Wrapped, 'length', { value: 1, configurable: true });
  markNative(Wrapped, name);
  defProp(Wrapped, 'name', { value: name, configurable: true });
  // `f instanceof Function` and `f.constructor === Function` keep holding for every function.
  defProp(Wrapped, 'prototype', { value: proto, writable: false, enumerable: false, configurable: false });
  defProp(proto, 'constructor', { value: Wrapped, writable: getDesc(proto, 'constructor').writable, configurable: true });
  if (sample === null) patch(G, 'Function', Wrapped);
}

function installDynamicFunctions() {
  if (!REC) return; // repair mode runs page code as it is: nothing to instrument
  for (let i = 0; i < DYNAMIC_KINDS.length; i++) {
    const k = DYNAMIC_KINDS[i];
    try {
      wrapFunctionCtor(k[0], k[1], k[2]);
    } catch (_) {
      // this constructor stays native
    }
  }
}
