// prelude.js — private copies of every native the runtime uses.
//
// This file runs before any page script (the runtime is the first script of every document),
// so everything captured here is the browser's own implementation. Later code calls natives
// only through these copies: pages that overwrite Function.prototype.apply/call,
// Array.prototype.push, setTimeout or Map.prototype.get cannot break the controller. Our own
// arrays are filled with `a[a.length] = x` and iterated with index loops (no iterators, no
// spread), and our dictionaries are null-prototype objects.

const G = globalThis;
const W = typeof window === 'object' && window === G ? G : null;
const O = Object;
const FP = Function.prototype;
const rApply = Reflect.apply;
const rConstruct = Reflect.construct;
const ownKeys = Reflect.ownKeys;
const defProp = O.defineProperty;
const getDesc = O.getOwnPropertyDescriptor;
const getProto = O.getPrototypeOf;
const ownNames = O.getOwnPropertyNames;
const objCreate = O.create;
const freeze = O.freeze;
const isArray = Array.isArray;
const jsonStr = JSON.stringify;
const mathFloor = Math.floor;
const mathMin = Math.min;
const mathMax = Math.max;
const NativeError = Error;
const NativeString = String;
const NativeNumber = Number;
const NativePromise = Promise;
const NativeWeakMap = WeakMap;
const NativeWeakSet = WeakSet;
const NativeDate = Date;
const NativeMath = Math;
const nativeEval = G.eval;

/** `uncurry(f)(self, a, b)` calls `f` with `this = self`, immune to later prototype patches. */
const uncurry = (f) => rApply(FP.bind, FP.call, [f]);
/** The getter of accessor `name` found on `proto` (or its chain), uncurried; null when absent. */
function getterOf(proto, name) {
  for (let p = proto; p !== null; p = getProto(p)) {
    const d = getDesc(p, name);
    if (d !== undefined) return d.get ? uncurry(d.get) : null;
  }
  return null;
}
function setterOf(proto, name) {
  for (let p = proto; p !== null; p = getProto(p)) {
    const d = getDesc(p, name);
    if (d !== undefined) return d.set ? uncurry(d.set) : null;
  }
  return null;
}
function methodOf(proto, name) {
  const f = proto ? proto[name] : undefined;
  return typeof f === 'function' ? uncurry(f) : null;
}

const objToString = uncurry(O.prototype.toString);
const hasOwn = O.hasOwn;
const fnToString = uncurry(FP.toString);
const strSlice = uncurry(String.prototype.slice);
const strIndexOf = uncurry(String.prototype.indexOf);
const strToLower = uncurry(String.prototype.toLowerCase);
const strCharCode = uncurry(String.prototype.charCodeAt);
const strReplace = uncurry(String.prototype.replace);
const strSplit = uncurry(String.prototype.split);
const reExec = uncurry(RegExp.prototype.exec);
const NativeRegExp = RegExp;
const numToString = uncurry(Number.prototype.toString);
const wmGet = uncurry(WeakMap.prototype.get);
const wmSet = uncurry(WeakMap.prototype.set);
const wmHas = uncurry(WeakMap.prototype.has);
const wmDelete = uncurry(WeakMap.prototype.delete);
const wsAdd = uncurry(WeakSet.prototype.add);
const wsHas = uncurry(WeakSet.prototype.has);
const promiseThen = uncurry(Promise.prototype.then);
const promiseResolve = (v) => rApply(Promise.resolve, NativePromise, [v]);
const dateNow = NativeDate.now;
const mathRandom = NativeMath.random;

// Timers and task sources.
const nSetTimeout = G.setTimeout;
const nClearTimeout = G.clearTimeout;
const nSetInterval = G.setInterval;
const nClearInterval = G.clearInterval;
const nRaf = G.requestAnimationFrame;
const nCancelRaf = G.cancelAnimationFrame;
const nRic = G.requestIdleCallback;
const nCancelRic = G.cancelIdleCallback;
const nQueueMicrotask = G.queueMicrotask;
const NMessageChannel = G.MessageChannel;
const portPost = G.MessagePort ? uncurry(MessagePort.prototype.postMessage) : null;
const portOnMessageSet = G.MessagePort ? setterOf(MessagePort.prototype, 'onmessage') : null;

// Events.
const ETP = G.EventTarget ? EventTarget.prototype : null;
const nAddEL = uncurry(ETP.addEventListener);
const nRemoveEL = uncurry(ETP.removeEventListener);
const nDispatch = uncurry(ETP.dispatchEvent);
const EP = Event.prototype;
const evType = getterOf(EP, 'type');
const evTarget = getterOf(EP, 'target');
const evCurrentTarget = getterOf(EP, 'currentTarget');
// isTrusted is [LegacyUnforgeable]: an own accessor of every event, sharing one getter.
const evTrusted = (() => {
  const d = getDesc(new Event('x'), 'isTrusted');
  return d && d.get ? uncurry(d.get) : (e) => e.isTrusted === true;
})();
const evComposedPath = uncurry(EP.composedPath);
const evStopImmediate = uncurry(EP.stopImmediatePropagation);
const evPreventDefault = uncurry(EP.preventDefault);
const evBubbles = getterOf(EP, 'bubbles');
const evPhase = getterOf(EP, 'eventPhase');

// DOM.
const NodeP = G.Node ? Node.prototype : null;
const DocP = G.Document ? Document.prototype : null;
const ElP = G.Element ? Element.prototype : null;
const NNode = G.Node || function () {};
const nodeName = NodeP ? getterOf(NodeP, 'nodeName') : null;
const nodeType = NodeP ? getterOf(NodeP, 'nodeType') : null;
const nodeConnected = NodeP ? getterOf(NodeP, 'isConnected') : null;
const nodeOwnerDoc = NodeP ? getterOf(NodeP, 'ownerDocument') : null;
const nodeFirstChild = NodeP ? getterOf(NodeP, 'firstChild') : null;
const nodeNextSibling = NodeP ? getterOf(NodeP, 'nextSibling') : null;
const elGetAttr = ElP ? uncurry(ElP.getAttribute) : null;
const elHasAttr = ElP ? uncurry(ElP.hasAttribute) : null;
const elId = ElP ? getterOf(ElP, 'id') : null;
const elQSA = ElP ? uncurry(ElP.querySelectorAll) : null;
const elAttrNames = ElP ? uncurry(ElP.getAttributeNames) : null;
const elLocalName = ElP ? getterOf(ElP, 'localName') : null;
const elMatches = ElP ? uncurry(ElP.matches) : null;
const elClosest = ElP ? uncurry(ElP.closest) : null;
const elSetAttr = ElP ? uncurry(ElP.setAttribute) : null;
const elAppend = ElP ? uncurry(ElP.append) : null;
const elRemove = ElP ? uncurry(ElP.remove) : null;
const elAttachShadow = ElP ? uncurry(ElP.attachShadow) : null;
const elRemoveAttr = ElP ? uncurry(ElP.removeAttribute) : null;
const docCurrentScript = DocP ? getterOf(DocP, 'currentScript') : null;
const docReadyState = DocP ? getterOf(DocP, 'readyState') : null;
const docScripts = DocP ? getterOf(DocP, 'scripts') : null;
const hcLength = G.HTMLCollection ? getterOf(HTMLCollection.prototype, 'length') : null;
const hcItem = G.HTMLCollection ? uncurry(HTMLCollection.prototype.item) : null;
const docQSA = DocP ? uncurry(DocP.querySelectorAll) : null;
const scriptSrc = G.HTMLScriptElement ? getterOf(HTMLScriptElement.prototype, 'src') : null;
const scriptAsync = G.HTMLScriptElement ? getterOf(HTMLScriptElement.prototype, 'async') : null;
const scriptDefer = G.HTMLScriptElement ? getterOf(HTMLScriptElement.prototype, 'defer') : null;
// Form fields: what trusted input/change events changed (events.js).
const NInput = G.HTMLInputElement || null;
const NTextArea = G.HTMLTextAreaElement || null;
const NSelect = G.HTMLSelectElement || null;
const inputType = NInput ? getterOf(NInput.prototype, 'type') : null;
const inputValue = NInput ? getterOf(NInput.prototype, 'value') : null;
const inputChecked = NInput ? getterOf(NInput.prototype, 'checked') : null;
const textAreaValue = NTextArea ? getterOf(NTextArea.prototype, 'value') : null;
const selectValue = NSelect ? getterOf(NSelect.prototype, 'value') : null;
const selectIndex = NSelect ? getterOf(NSelect.prototype, 'selectedIndex') : null;
const NMutationObserver = G.MutationObserver;
const moObserve = NMutationObserver ? uncurry(NMutationObserver.prototype.observe) : null;
const moTakeRecords = NMutationObserver ? uncurry(NMutationObserver.prototype.takeRecords) : null;
const mrType = G.MutationRecord ? getterOf(MutationRecord.prototype, 'type') : null;
const mrTarget = G.MutationRecord ? getterOf(MutationRecord.prototype, 'target') : null;
const mrAdded = G.MutationRecord ? getterOf(MutationRecord.prototype, 'addedNodes') : null;
const mrRemoved = G.MutationRecord ? getterOf(MutationRecord.prototype, 'removedNodes') : null;
const mrAttr = G.MutationRecord ? getterOf(MutationRecord.prototype, 'attributeName') : null;
const mrOld = G.MutationRecord ? getterOf(MutationRecord.prototype, 'oldValue') : null;
const nlLength = G.NodeList ? getterOf(NodeList.prototype, 'length') : null;
const nlItem = G.NodeList ? uncurry(NodeList.prototype.item) : null;

// Network.
const nFetch = G.fetch;
const nSendBeacon = G.navigator && navigator.sendBeacon ? uncurry(navigator.sendBeacon) : null;
const navigatorObj = G.navigator;
const NRequest = G.Request;
const locHref = G.location ? getterOf(G.location, 'href') : null;
const XHRP = G.XMLHttpRequest ? XMLHttpRequest.prototype : null;

// Randomness (captured before deterministic mode replaces them).
const nCrypto = G.crypto;
const nGetRandomValues = nCrypto ? uncurry(nCrypto.getRandomValues) : null;
const nPerfNow = G.performance ? uncurry(performance.now) : null;
const perfObj = G.performance;

/** The current document URL, read through the native getter. */
function pageHref() {
  try {
    return locHref ? locHref(G.location) : NativeString(G.location);
  } catch (_) {
    return '';
  }
}
const encodeURIComponent = G.encodeURIComponent;
const nodeParent = NodeP ? getterOf(NodeP, 'parentNode') : null;
const elPrevSibling = ElP ? getterOf(ElP, 'previousElementSibling') : null;
const elNextSibling = ElP ? getterOf(ElP, 'nextElementSibling') : null;
const docGetById = DocP ? uncurry(DocP.getElementById) : null;
const MEP = G.MessageEvent ? MessageEvent.prototype : null;
const meSource = MEP ? getterOf(MEP, 'source') : null;
const NEvent = G.Event;
const NErrorEvent = G.ErrorEvent;
const NPromiseRejectionEvent = G.PromiseRejectionEvent;
const nXhrOpen = XHRP ? uncurry(XHRP.open) : null;
const nXhrSend = XHRP ? uncurry(XHRP.send) : null;
const nXhrStatus = XHRP ? getterOf(XHRP, 'status') : null;
const nXhrText = XHRP ? getterOf(XHRP, 'responseText') : null;
const NXMLHttpRequest = G.XMLHttpRequest;

// ---- naming objects without running page code ------------------------------------------------
//
// Logging names objects (`Map[3].size`) and summarises values (`Function[4]:name`), and neither
// may run page code: Object.prototype.toString reads @@toStringTag (a page getter, a Proxy's
// `get` trap), a function's `name` descriptor is one Proxy trap away, and `instanceof` asks a
// Proxy for its prototype. Proxies are recognised by a registry (access.js wraps `Proxy` before
// any page script in record mode), prototype chains are walked here and the walk stops at a
// Proxy, and accessors a page may have defined are never called.

/** Proxies created through this realm's `Proxy` since the runtime loaded. */
const proxies = new NativeWeakSet();
let proxyCount = 0;
const TO_STRING_TAG = Symbol.toStringTag;
// The one built-in @@toStringTag accessor (typed arrays): native, safe to call.
const TYPED_ARRAY_TAG = (() => {
  const d = getDesc(getProto(Uint8Array.prototype), TO_STRING_TAG);
  return d && hasOwn(d, 'get') ? d.get : null;
})();
const ordinaryHasInstance = FP[Symbol.hasInstance];

/** True for a registered Proxy (never runs a trap). */
function isProxy(o) {
  return proxyCount !== 0 && wsHas(proxies, o);
}

/**
 * What Object.prototype.toString names `o` (`Object`, `Map`, `XMLHttpRequest`…), found without
 * running page code: 'Object' when only a Proxy or a page-defined @@toStringTag getter could
 * tell. Walks the prototype chain for @@toStringTag itself; Object.prototype.toString runs only
 * when no tag exists, so its own lookup finds nothing either.
 */
function objClass(o) {
  try {
    for (let p = o, depth = 0; p !== null; depth++) {
      if (depth > 64 || isProxy(p)) return 'Object';
      const d = getDesc(p, TO_STRING_TAG);
      if (d !== undefined) {
        if (hasOwn(d, 'value')) {
          if (typeof d.value === 'string') return d.value;
          break; // not a string: toString falls back to the built-in tag, reading only this
        }
        if (TYPED_ARRAY_TAG !== null && d.get === TYPED_ARRAY_TAG) {
          const t = rApply(TYPED_ARRAY_TAG, o, []);
          return typeof t === 'string' ? t : 'Object';
        }
        return 'Object';
      }
      p = getProto(p);
    }
    return strSlice(objToString(o), 8, -1);
  } catch (_) {
    return 'Object'; // cross-origin objects refuse even to be looked at
  }
}

/** The `name` of function `f` when it is an own string data property, else ''. */
function fnName(f) {
  if (isProxy(f)) return '';
  try {
    const d = getDesc(f, 'name');
    return d !== undefined && hasOwn(d, 'value') && typeof d.value === 'string' ? d.value : '';
  } catch (_) {
    return '';
  }
}

/** `o instanceof C` for an object `o` and a native constructor `C`, asking no Proxy and
 *  ignoring a page-defined `C[Symbol.hasInstance]`. */
function inherits(o, C) {
  if (proxyCount === 0) return rApply(ordinaryHasInstance, C, [o]);
  const proto = C.prototype;
  for (let p = o, depth = 0; p !== null && depth <= 64; depth++) {
    if (isProxy(p)) return false;
    p = getProto(p);
    if (p === proto) return true;
  }
  return false;
}
const meData = MEP ? getterOf(MEP, 'data') : null;
const NEventTarget = G.EventTarget || null;
const NURL = G.URL || null;

// Workers. The proxy prepends the runtime to worker scripts (docs/runtime-api.md, "Runtime:
// workers"): a dedicated worker traces and forwards its records to the page that created it;
// shared and service workers only define `__shepherd` (instrumented code runs there too).
const WORKER_SCOPE = typeof G.WorkerGlobalScope === 'function' && G instanceof G.WorkerGlobalScope;
const DEDICATED = typeof G.DedicatedWorkerGlobalScope === 'function' &&
  G instanceof G.DedicatedWorkerGlobalScope;
// Members of a [Global] interface live on the global object itself, not on its prototype.
const nParentPost = DEDICATED && typeof G.postMessage === 'function' ? uncurry(G.postMessage) : null;
const NWorker = typeof G.Worker === 'function' ? G.Worker : null;

// Storage.
const StorageP = G.Storage ? Storage.prototype : null;
const SEP = G.StorageEvent ? StorageEvent.prototype : null;
const seKey = SEP ? getterOf(SEP, 'key') : null;
const seNew = SEP ? getterOf(SEP, 'newValue') : null;
const seArea = SEP ? getterOf(SEP, 'storageArea') : null;

// Form fields (radio groups, dom.js / events.js).
const inputName = NInput ? getterOf(NInput.prototype, 'name') : null;
const inputForm = NInput ? getterOf(NInput.prototype, 'form') : null;
const nodeRoot = NodeP ? uncurry(NodeP.getRootNode) : null;
const nXhrReadyState = XHRP ? getterOf(XHRP, 'readyState') : null;

/** The readyState of `x` when it is an XMLHttpRequest, else -1 (also when it cannot be read). */
function xhrState(x) {
  if (!NXMLHttpRequest || !(x instanceof NXMLHttpRequest) || nXhrReadyState === null) return -1;
  try {
    return nXhrReadyState(x);
  } catch (_) {
    return -1;
  }
}

// Repair: what postponed user input needs to keep its effects (repair.js).
const HEP0 = G.HTMLElement ? HTMLElement.prototype : null;
const nFocus = HEP0 ? uncurry(HEP0.focus) : null;
const nBlur = HEP0 ? uncurry(HEP0.blur) : null;
const nClick = HEP0 ? uncurry(HEP0.click) : null;
const elIsContentEditable = HEP0 ? getterOf(HEP0, 'isContentEditable') : null;
const docActiveElement = DocP ? getterOf(DocP, 'activeElement') : null;
const docBody = DocP ? getterOf(DocP, 'body') : null;
const docDocumentElement = DocP ? getterOf(DocP, 'documentElement') : null;
const docCreateElement = DocP ? uncurry(DocP.createElement) : null;
const docExecCommand = DocP && DocP.execCommand ? uncurry(DocP.execCommand) : null;
const inputSetRange = NInput ? uncurry(NInput.prototype.setRangeText) : null;
const textAreaSetRange = NTextArea ? uncurry(NTextArea.prototype.setRangeText) : null;
const inputSelStart = NInput ? getterOf(NInput.prototype, 'selectionStart') : null;
const inputSelEnd = NInput ? getterOf(NInput.prototype, 'selectionEnd') : null;
const textAreaSelStart = NTextArea ? getterOf(NTextArea.prototype, 'selectionStart') : null;
const textAreaSelEnd = NTextArea ? getterOf(NTextArea.prototype, 'selectionEnd') : null;
const inputValueSet = NInput ? setterOf(NInput.prototype, 'value') : null;
const NForm = G.HTMLFormElement || null;
const formRequestSubmit = NForm && NForm.prototype.requestSubmit ? uncurry(NForm.prototype.requestSubmit) : null;
const formSubmit = NForm ? uncurry(NForm.prototype.submit) : null;
const elQS = ElP ? uncurry(ElP.querySelector) : null;
const NInputEvent = G.InputEvent || null;
const NKeyboardEvent = G.KeyboardEvent || null;
const kbKey = NKeyboardEvent ? getterOf(NKeyboardEvent.prototype, 'key') : null;
const kbCode = NKeyboardEvent ? getterOf(NKeyboardEvent.prototype, 'code') : null;
const kbCtrl = NKeyboardEvent ? getterOf(NKeyboardEvent.prototype, 'ctrlKey') : null;
const kbMeta = NKeyboardEvent ? getterOf(NKeyboardEvent.prototype, 'metaKey') : null;
const kbAlt = NKeyboardEvent ? getterOf(NKeyboardEvent.prototype, 'altKey') : null;
const kbShift = NKeyboardEvent ? getterOf(NKeyboardEvent.prototype, 'shiftKey') : null;
const ieData = NInputEvent ? getterOf(NInputEvent.prototype, 'data') : null;
const meButton = G.MouseEvent ? getterOf(MouseEvent.prototype, 'button') : null;
const scriptSrcSet = G.HTMLScriptElement ? setterOf(HTMLScriptElement.prototype, 'src') : null;
const elGetAttrNative = ElP ? ElP.getAttribute : null;
const shadowInnerSet = G.ShadowRoot ? setterOf(ShadowRoot.prototype, 'innerHTML') : null;
const fragQSA = G.DocumentFragment ? uncurry(DocumentFragment.prototype.querySelectorAll) : null;
