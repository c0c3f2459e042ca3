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

// ---- HTML strings -----------------------------------------------------------------------------
//
// Markup handed to document.write/writeln, the innerHTML/outerHTML setters, insertAdjacentHTML,
// setHTMLUnsafe and Range#createContextualFragment may hold code the browser will run: inline
// scripts (write, createContextualFragment), `on*` attributes and `javascript:` URLs (all). In
// record mode such a string goes through the instrumenter as one fragment (kind `html`: the
// proxy's HTML rewriter without runtime injection) and the native gets the instrumented markup.
// A cheap test comes first: most strings hold no code and must not cost a request. Anything
// else — not a string (TrustedHTML, objects whose toString would run twice), lone surrogates
// (they would not survive the UTF-8 round trip), a failed request — leaves the string as it is.
// dom.js calls these from its existing wrappers of the same APIs.

// `<script`, an attribute named on… (after whitespace, `/` or a closing quote, as the
// tokenizer allows), or a javascript: URL. False positives only cost one (cached) request.
const HTML_CODE_RE = /<script|[\s/"']on[a-z]+\s*=|javascript:/i;
const strWellFormed = typeof String.prototype.isWellFormed === 'function'
  ? uncurry(String.prototype.isWellFormed)
  : null;
// Elements whose content is text, not markup: their innerHTML must stay byte for byte.
const RAW_TEXT = objCreate(null);
for (const n of ['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes',
  'noscript', 'plaintext']) RAW_TEXT[n] = 1;

/** `s` with the code it holds instrumented, or `s` itself. */
function htmlCode(s) {
  if (!REC || typeof s !== 'string' || typeof api.i !== 'function') return s;
  try {
    if (reExec(HTML_CODE_RE, s) === null) return s;
    if (strWellFormed !== null && !strWellFormed(s)) return s;
    const out = api.i(s, 'html');
    return typeof out === 'string' ? out : s;
  } catch (_) {
    return s;
  }
}

/** Whether markup parsed with context `el` is raw text (the context is then left alone). */
function rawTextContext(el) {
  try {
    return el !== null && nodeType(el) === 1 && RAW_TEXT[elLocalName(el)] === 1;
  } catch (_) {
    return false;
  }
}

/** Setter fix for innerHTML (context: the element itself; shadow roots: none). */
function htmlInner(self, v) {
  return rawTextContext(self) ? v : htmlCode(v);
}

/** Setter fix for outerHTML (context: the parent). */
function htmlOuter(self, v) {
  let p = null;
  try {
    p = nodeParent(self);
  } catch (_) {
    return v;
  }
  return rawTextContext(p) ? v : htmlCode(v);
}

/** Argument fix for insertAdjacentHTML(position, text). */
function htmlAdjacent(self, args) {
  if (args.length < 2 || typeof args[1] !== 'string') return args;
  const where = args[0];
  let ctx = self;
  if (typeof where === 'string') {
    const w = strToLower(where);
    if (w === 'beforebegin' || w === 'afterend') {
      try {
        ctx = nodeParent(self);
      } catch (_) {
        return args;
      }
    }
  }
  if (rawTextContext(ctx)) return args;
  const s = htmlCode(args[1]);
  if (s === args[1]) return args;
  const out = [];
  for (let i = 0; i < args.length; i++) out[i] = args[i];
  out[1] = s;
  return out;
}

/** Argument fix for document.write/writeln(...text): the strings as one fragment, as the
 *  native joins them (a script may span two arguments). */
function htmlWrite(self, args) {
  const n = args.length;
  if (n === 0) return args;
  let s = '';
  for (let i = 0; i < n; i++) {
    if (typeof args[i] !== 'string') return args;
    s += args[i];
  }
  const out = htmlCode(s);
  return out === s ? args : [out];
}

/** Argument fix for setHTMLUnsafe(html, options). */
function htmlFirst(self, args) {
  if (args.length < 1 || typeof args[0] !== 'string') return args;
  const s = htmlInner(self, args[0]);
  if (s === args[0]) return args;
  const out = [];
  for (let i = 0; i < args.length; i++) out[i] = args[i];
  out[0] = s;
  return out;
}

/** Range#createContextualFragment: not DOM-changing, so wrapped here (record mode only). */
function installContextualFragment() {
  if (!REC || !G.Range) return;
  const RP = Range.prototype;
  const f = RP.createContextualFragment;
  if (typeof f !== 'function') return;
  const wrapped = function createContextualFragment(s) {
    if (arguments.length < 1 || typeof s !== 'string') return rApply(f, this, arguments);
    const out = htmlCode(s);
    if (out === s) return rApply(f, this, arguments);
    const args = [];
    for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
    args[0] = out;
    return rApply(f, this, args);
  };
  defProp(wrapped, 'length', { value: f.length, configurable: true });
  patch(RP, 'createContextualFragment', wrapped);
}
