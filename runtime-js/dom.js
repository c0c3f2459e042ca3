// dom.js — parse chunks and script executions, logical DOM locations (id map, node existence,
// className, cookie, listener attributes), and who created/inserted each element.
//
// Parse chunks. A MutationObserver on the document sees every node the parser inserts. Its
// callback is a microtask: the parser performs a microtask checkpoint before each script end tag
// and at the end of each parser task, while script-made changes are delivered in the checkpoint
// right after the script or callback that made them. So a delivery is the parser's when the
// document is still being parsed (DOMContentLoaded not yet dispatched) and no DOM-changing API
// was called since the previous delivery (all such APIs set `domByScript`). A parser delivery
// becomes one `parse` action, chained (join) after the previous parse chunk or parser-blocking
// script; when it ends with an inline classic script, that script's action begins at once (the
// script runs right after this checkpoint).
//
// Script executions. Classic scripts are recognised by `document.currentScript` whenever our
// hooks run at stack depth 0 (`ensure()` in controller.js); instrumented code registers itself
// first thing (`__shepherd.src` → `T.scriptStart`), so a script that calls nothing else still
// gets its action. Module scripts have no currentScript: their first registration in a
// synchronous run begins a `script:module` action (see scriptStart). Parser-blocking scripts are
// chained in document order; async/defer and inserted scripts are forked by the action that
// inserted them; defer scripts and non-async parser module scripts run in one document-order
// list once parsing has finished, before DOMContentLoaded (HTML's "scripts that will execute
// when the document has finished parsing"), so they are chained after the last parse chunk
// and DOMContentLoaded joins them.

let parsing = true; // until DOMContentLoaded is dispatched
let domByScript = false;
let lastChain = -1; // last parse chunk or parser-blocking script action
let nParserScripts = 0;
const deferActions = [];
const scriptMeta = new NativeWeakMap(); // script element -> {by, chunk, n, parser, began}
const moduleScripts = []; // module script elements seen, in insertion order (began ones drop out)

function scriptMetaOf(el) {
  let sm = wmGet(scriptMeta, el);
  if (sm === undefined) {
    sm = { by: null, chunk: -1, n: 0, parser: false, began: false, action: -1 };
    wmSet(scriptMeta, el, sm);
  }
  return sm;
}

// JavaScript MIME type essences (HTML, "JavaScript MIME type"): a script element whose type is
// none of these nor `module` holds data the browser does not run.
const JS_MIME = objCreate(null);
for (const t of ['application/ecmascript', 'application/javascript', 'application/x-ecmascript',
  'application/x-javascript', 'text/ecmascript', 'text/javascript', 'text/javascript1.0',
  'text/javascript1.1', 'text/javascript1.2', 'text/javascript1.3', 'text/javascript1.4',
  'text/javascript1.5', 'text/jscript', 'text/livescript', 'text/x-ecmascript', 'text/x-javascript']) {
  JS_MIME[t] = 1;
}

function trimAsciiSpace(s) {
  const sp = (c) => c === 9 || c === 10 || c === 12 || c === 13 || c === 32;
  let a = 0;
  let b = s.length;
  while (a < b && sp(strCharCode(s, a))) a++;
  while (b > a && sp(strCharCode(s, b - 1))) b--;
  return strSlice(s, a, b);
}

/**
 * Whether a script element with these attributes runs (HTML, "prepare the script element"):
 * `type` and `language` are the attribute values (null when absent). A classic script marked
 * `nomodule` does not run in a browser with modules. A script that would never run must not
 * be taken for an event to wait for: nothing would ever arrive.
 */
function runsAsScript(type, language, nomodule) {
  let t = 'text/javascript'; // no type, an empty one, and no language or an empty one
  if (type !== null && type !== '') t = strToLower(trimAsciiSpace(type));
  else if (type === null && language !== null && language !== '') t = 'text/' + strToLower(trimAsciiSpace(language));
  if (t === 'module') return true;
  return JS_MIME[t] === 1 && !nomodule;
}

/** Whether a script with this `type` attribute (null: none) is a module. */
function isModuleType(type) {
  return type !== null && strToLower(trimAsciiSpace(type)) === 'module';
}

/** Whether script element `el` is a module (its `type`, trimmed, is `module` in any case). */
function isModuleScript(el) {
  return isModuleType(elGetAttr(el, 'type'));
}

/** Whether script element `el` runs (see runsAsScript). */
function isJsType(el) {
  return runsAsScript(elGetAttr(el, 'type'), elGetAttr(el, 'language'), elHasAttr(el, 'nomodule'));
}

function scriptKind(el, sm) {
  if (isModuleScript(el)) return 'module';
  const hasSrc = elHasAttr(el, 'src');
  if (!sm.parser) return 'inserted';
  if (!hasSrc) return 'inline';
  if (scriptAsync(el)) return 'async';
  if (scriptDefer(el)) return 'defer';
  return 'external';
}

/** Label name, parent, kind of script element `el` (allocating its parser ordinal). */
function scriptName(el, sm) {
  // Without a repair policy's hold marker: the script's URL as the page wrote it.
  const src = elHasAttr(el, 'src') ? stripMarkers(scriptSrc(el)) : '';
  if (sm.n === 0 && sm.parser) sm.n = ++nParserScripts;
  return { kind: scriptKind(el, sm), src, name: src || '#' + sm.n, parent: sm.by !== null && !sm.parser ? sm.by : ROOT };
}

/**
 * The arcs into the execution of `el`: fork from the inserter or the parse chunk, and the
 * document-order chains (parser-blocking scripts; defer scripts and non-async parser modules).
 * The caller writes them (in the begin record, or later for module graphs), then scriptRan().
 */
function scriptArcs(el, sm, kind) {
  let from = -1;
  let joins = null;
  const blocking = kind === 'inline' || kind === 'external';
  // Deferred: classic defer scripts and parser-inserted module scripts without `async`.
  const deferred = kind === 'defer' || (kind === 'module' && sm.parser && !scriptAsync(el));
  if (!sm.parser) {
    from = sm.by !== null ? sm.by.id : -1;
  } else if (blocking) {
    if (lastChain >= 0) joins = [lastChain];
  } else {
    from = sm.chunk;
    if (deferred) {
      // A deferred script runs once the parser has finished: after the last parse chunk and
      // parser-blocking script (lastChain), and after the deferred script before it.
      joins = [];
      if (lastChain >= 0) joins[0] = lastChain;
      if (deferActions.length > 0) joins[joins.length] = deferActions[deferActions.length - 1];
      if (joins.length === 0) joins = null;
    }
  }
  return { from, joins, blocking, deferred, parser: sm.parser };
}

/** Bookkeeping once action `id` is the execution of `el` (arcs `a` already written). */
function scriptRan(el, sm, kind, a, id) {
  if (info !== null && info.id === id) info.script = el;
  sm.began = true;
  sm.action = id;
  if (a.blocking && a.parser) lastChain = id;
  if (a.deferred) deferActions[deferActions.length] = id;
  else if (kind === 'async' || kind === 'inserted' || kind === 'module') loadPreds[loadPreds.length] = id;
}

/** Begins the action of script element `el`'s execution. */
function beginScript(el) {
  const sm = scriptMetaOf(el);
  const nm = scriptName(el, sm);
  const a = scriptArcs(el, sm, nm.kind);
  const d = {
    hid: 0, type: 0, kind: 'script', stable: childStable(nm.parent, 'script', nm.name),
    label: 'script:' + nm.kind + ' ' + nm.name, from: a.from, delay: undefined, joins: a.joins, url: nm.src,
    seq: nTaskSeq++, parent: nm.parent, pos: nm.src ? nm.src + ':1:1' : undefined,
  };
  begin(d);
  // The execution reads its element's existence, which the inserting action wrote: the
  // analysis orders what one action created by these writes, and a policy's selector is
  // judged by the element's description (docs/policies.md, ≤_P).
  if (REC) {
    const n = oid(el);
    nameNode(el, n);
    readEntry(treeEntry(el));
  }
  scriptRan(el, sm, nm.kind, a, d.action);
}

// Module graphs. A module script element's graph evaluates in one synchronous run, imported
// modules first and the element's own module last, each registering (`src`) first thing. So
// the run belongs to the module script element that one of its registrations names exactly
// (its `src` URL, or F=1 for an inline module); a run none of them names is a dynamic
// `import()`. When the first registration is a dependency, the action begins at once (its
// accesses happen now) under a provisional name, and its arcs are written when the element's
// own registration arrives (arcs may follow their head's begin, docs/trace-format.md).
let moduleRun = false; // set during a run, cleared by a microtask after the whole graph ran
let runAction = -1; // the action of the current run
let runOwned = false; // whether the run's element is known (its arcs are written)
function clearModuleRun() {
  moduleRun = false;
  runAction = -1;
}

/** The waiting module script element named exactly by a registration (url, F=1: inline). */
function moduleNamed(url, inline) {
  let j = 0;
  let found = null;
  for (let i = 0; i < moduleScripts.length; i++) {
    const el = moduleScripts[i];
    if (scriptMetaOf(el).began) continue;
    moduleScripts[j++] = el;
    if (found !== null) continue;
    const hasSrc = elHasAttr(el, 'src');
    if (inline ? !hasSrc : hasSrc && scriptSrc(el) === url) found = el;
  }
  moduleScripts.length = j;
  return found;
}

/**
 * A name for a run that starts with a dependency: the waiting module that most likely runs now
 * (while the document is loading only async/inserted ones can; afterwards deferred ones run
 * first, in document order). Only the label; arcs wait for the exact match.
 */
function moduleGuess() {
  let deferredFirst = null;
  let asyncFirst = null;
  for (let i = 0; i < moduleScripts.length; i++) {
    const el = moduleScripts[i];
    const sm = scriptMetaOf(el);
    if (sm.began) continue;
    if (sm.parser && !scriptAsync(el)) {
      if (deferredFirst === null) deferredFirst = el;
    } else if (asyncFirst === null) {
      asyncFirst = el;
    }
  }
  let loading = false;
  try {
    loading = docReadyState !== null && docReadyState(DOCUMENT) === 'loading';
  } catch (_) {
    loading = false;
  }
  if (loading) return asyncFirst !== null ? asyncFirst : deferredFirst;
  return deferredFirst !== null ? deferredFirst : asyncFirst;
}

// Dynamic import(). Instrumented code hands the specifier to `__shepherd.di` before the
// import starts (access.js), so the run that evaluates the imported graph is forked by the
// calling action: the run whose registration is the imported URL (or a dependency's, for a
// run that starts with one). A module evaluated before is not evaluated again: its entry
// stays until pushed out (DYN_CAP).
const dynImports = []; // {url, spec, from, parent}, oldest first
const DYN_CAP = 64;
const nodeBaseURI = NodeP ? getterOf(NodeP, 'baseURI') : null;

/** `T.dynImport(specifier, base)`: the current action starts `import(specifier)`. */
function dynImport(spec, base) {
  ensure();
  let b = typeof base === 'string' ? base : '';
  if (b === '') {
    const cs = DOCUMENT !== null && docCurrentScript !== null ? docCurrentScript(DOCUMENT) : null;
    if (cs !== null && elHasAttr(cs, 'src')) b = scriptSrc(cs);
    else if (DOCUMENT !== null && nodeBaseURI !== null) b = nodeBaseURI(DOCUMENT);
    else b = pageHref();
  }
  let url = spec;
  try {
    url = NURL !== null ? new NURL(spec, b).href : spec;
  } catch (_) {
    url = spec;
  }
  if (dynImports.length >= DYN_CAP) {
    for (let i = 1; i < dynImports.length; i++) dynImports[i - 1] = dynImports[i];
    dynImports.length--;
  }
  dynImports[dynImports.length] = { url, spec, from: cur, parent: parentInfo() };
}

/** The pending import of URL `u` (removed from the list), or null. */
function dynNamed(u) {
  for (let i = 0; i < dynImports.length; i++) {
    if (dynImports[i].url !== u) continue;
    const d = dynImports[i];
    for (let j = i + 1; j < dynImports.length; j++) dynImports[j - 1] = dynImports[j];
    dynImports.length--;
    return d;
  }
  return null;
}

/** Makes the current run's action the execution of `el`: writes its arcs now. */
function ownRun(el) {
  const sm = scriptMetaOf(el);
  const kind = scriptKind(el, sm);
  const a = scriptArcs(el, sm, kind);
  const id = runAction;
  if (REC) {
    if (a.from >= 0 && a.from < id) out += '["a",' + a.from + ',' + id + ',"f"]\n';
    const js = a.joins;
    if (js !== null) {
      for (let i = 0; i < js.length; i++) {
        if (js[i] >= 0 && js[i] < id && js[i] !== a.from) out += '["a",' + js[i] + ',' + id + ',"j"]\n';
      }
    }
  }
  scriptRan(el, sm, kind, a, id);
  runOwned = true;
}

/**
 * An inline script's action was begun before its code ran (from the parse chunk or by
 * currentScript), without a position: its registration names it (`doc#inline-<K>`), so a
 * scope with the same label and that position opens now, for reports to show the script.
 */
function inlinePosition(url) {
  let cs = null;
  try {
    cs = docCurrentScript(DOCUMENT);
  } catch (_) {
    cs = null;
  }
  if (cs !== info.script || !info.label) return;
  info.pos = true;
  const lb = sid(info.label);
  const ps = sid(NativeString(url) + ':1:1');
  out += '["e",' + lb + ',' + ps + ']\n';
  nOps++;
  info.scoped++;
}

/**
 * `T.scriptStart(url, F, isModule)`: instrumented code registers itself (docs/runtime-api.md,
 * `__shepherd.src`). Classic code: the currentScript check of ensure(). Modules: see "Module
 * graphs" above.
 */
function scriptStart(url, flag, isModule) {
  // A module without import/export is instrumented as a classic script (the proxy cannot tell):
  // it registers without currentScript, under the URL of a waiting module script.
  if (!isModule && flag === 0 && depth === 0 && DOCUMENT !== null && docCurrentScript !== null &&
    docCurrentScript(DOCUMENT) === null && moduleNamed(NativeString(url), false) !== null) {
    isModule = true;
  }
  if (!isModule || depth > 0 || DOCUMENT === null) {
    if (flag === 1 && depth === 0 && cur < 0 && REC && DOCUMENT !== null && docCurrentScript !== null &&
      docCurrentScript(DOCUMENT) === null && jsUrlBegin()) return;
    ensure();
    if (flag === 1 && depth === 0 && REC && info !== null && info.script !== null && !info.pos) inlinePosition(url);
    return;
  }
  const u = NativeString(url);
  if (moduleRun) {
    if (cur < 0) ensure();
    if (!runOwned && runAction >= 0) {
      const el = moduleNamed(u, flag === 1);
      if (el !== null) {
        ownRun(el);
        return;
      }
      const di = dynNamed(u);
      if (di !== null) {
        if (REC && di.from >= 0 && di.from < runAction) out += '["a",' + di.from + ',' + runAction + ',"f"]\n';
        runOwned = true;
      }
    }
    return;
  }
  moduleRun = true;
  rApply(nQueueMicrotask, G, [clearModuleRun]);
  const el = moduleNamed(u, flag === 1);
  if (el !== null) {
    beginScript(el);
    runAction = cur;
    runOwned = true;
    return;
  }
  const di = dynNamed(u);
  if (di !== null) {
    // The imported module itself registers first (it has no dependency left to evaluate).
    begin({
      hid: 0, type: 0, kind: 'script', stable: childStable(di.parent, 'import', u), label: 'script:module ' + u,
      from: di.from, delay: undefined, joins: null, url: u, seq: nTaskSeq++, parent: di.parent, pos: u + ':1:1',
    });
    runAction = cur;
    runOwned = true;
    return;
  }
  // A dependency first (its element's registration comes later in this run), or a dynamic
  // import(): begun now, named after the likely element or the URL, arcs when known.
  const g = moduleGuess();
  let name = u;
  let pos = u;
  let parent = ROOT;
  if (g !== null) {
    const nm = scriptName(g, scriptMetaOf(g));
    name = nm.name;
    pos = nm.src || u;
    parent = nm.parent;
  }
  begin({
    hid: 0, type: 0, kind: 'script', stable: childStable(parent, 'script', name), label: 'script:module ' + name,
    from: -1, delay: undefined, joins: null, url: u, seq: nTaskSeq++, parent, pos: pos + ':1:1',
  });
  runAction = cur;
  runOwned = false;
}

/** The action that executed script element `el`, or -1 (its `load` event comes after it). */
function scriptAction(el) {
  const sm = wmGet(scriptMeta, el);
  return sm === undefined ? -1 : sm.action;
}

/** The actions DOMContentLoaded waits for. */
function dclPreds() {
  parsing = false;
  const j = [];
  if (lastChain >= 0) j[0] = lastChain;
  for (let i = 0; i < deferActions.length; i++) j[j.length] = deferActions[i];
  return j;
}

const ID_RE = /^#([A-Za-z_\u00a0-\uffff][\w\u00a0-\uffff-]*)$/;

function idLoc(id) {
  return 'Tree[' + DOC_OID + ']:' + id;
}

/** What a newly attached element means: creator, existence, id, listener attributes, scripts. */
function noteElement(el, fromParser) {
  const m = metaOf(el);
  if (m.by === null) m.by = info;
  if (!REC) return;
  writeEntry(treeEntry(el), el);
  const id = elId(el);
  if (id && nodeConnected(el)) write(idLoc(id), el);
  if (elHasAttr(el, 'autofocus')) autofocusInserted(el);
  if (fromParser) {
    const names = elAttrNames(el);
    for (let i = 0; i < names.length; i++) {
      const n = names[i];
      if (n.length > 2 && strCharCode(n, 0) === 111 && strCharCode(n, 1) === 110) {
        write(targetLabel(el) + '.' + strSlice(n, 2), elGetAttr(el, n));
      }
    }
  }
}

function noteScript(el, fromParser) {
  const sm = scriptMetaOf(el);
  if (sm.by !== null || sm.parser) return;
  sm.by = info;
  if (fromParser) {
    sm.parser = true;
    sm.chunk = cur;
    sm.n = ++nParserScripts;
  }
  if (isModuleScript(el)) moduleScripts[moduleScripts.length] = el;
}

// Script-made subtrees (innerHTML of a list) can hold thousands of elements: only the roots
// of a delivery get creator and existence entries (at most NODE_CAP per delivery); elements
// inside find their creator through their nearest ancestor that has one (creatorOf), ids and
// scripts inside are found with one querySelectorAll each.
const NODE_CAP = 64;
let nodeBudget = NODE_CAP;

function noteAdded(node, fromParser) {
  if (nodeType(node) !== 1) return;
  if (fromParser || nodeBudget-- > 0) {
    noteElement(node, fromParser);
  } else {
    const m = metaOf(node);
    if (m.by === null) m.by = info;
  }
  if (elLocalName(node) === 'script') noteScript(node, fromParser);
  if (fromParser || nodeFirstChild(node) === null) return;
  const inner = elQSA(node, '[id],script,[autofocus]');
  for (let i = 0; i < nlLength(inner); i++) {
    const el = nlItem(inner, i);
    if (elLocalName(el) === 'script') noteScript(el, false);
    if (REC && elHasAttr(el, 'autofocus')) autofocusInserted(el);
    const id = elId(el);
    if (REC && id) write(idLoc(id), el);
  }
}

function noteRemoved(node) {
  if (!REC || nodeType(node) !== 1) return;
  const id = elId(node);
  if (id) write(idLoc(id), null);
  if (nodeFirstChild(node) === null) return;
  const ids = elQSA(node, '[id]');
  for (let i = 0; i < nlLength(ids); i++) write(idLoc(elId(nlItem(ids, i))), null);
}

function onMutations(records) {
  nodeBudget = NODE_CAP;
  let byParser = parsing && !domByScript;
  for (let i = 0; byParser && i < records.length; i++) byParser = mrType(records[i]) === 'childList';
  domByScript = false;
  if (byParser) {
    begin({
      hid: 0, type: 0, kind: 'parse', stable: childStable(ROOT, 'parse', ''), label: 'parse HTML',
      from: -1, delay: undefined, joins: lastChain >= 0 ? [lastChain] : null, url: undefined, seq: nTaskSeq++, parent: ROOT,
    });
    lastChain = cur;
  } else {
    ensure();
  }
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const t = mrType(r);
    if (t === 'childList') {
      const added = mrAdded(r);
      for (let j = 0; j < nlLength(added); j++) {
        const n = nlItem(added, j);
        noteAdded(n, byParser);
      }
      if (!byParser) {
        const removed = mrRemoved(r);
        for (let j = 0; j < nlLength(removed); j++) noteRemoved(nlItem(removed, j));
      }
    } else if (t === 'attributes' && REC) {
      const el = mrTarget(r);
      const name = mrAttr(r);
      if (name === 'id') {
        const old = mrOld(r);
        if (old) write(idLoc(old), null);
        const id = elId(el);
        if (id && nodeConnected(el)) write(idLoc(id), el);
      } else if (name === 'class') {
        writeEntry(objEntry(el, 'className'), elGetAttr(el, 'class'));
      } else if (name === 'href') {
        // Where a link goes (any API changed it): what following it reads (navigation.js).
        writeEntry(objEntry(el, 'href'), elGetAttr(el, 'href'));
      }
    }
  }
  if (byParser) {
    end();
    // Page observers notified in this same delivery run after the parse chunk (network.js).
    parseTail = lastChain;
    rApply(nQueueMicrotask, G, [clearParseTail]);
    // An inline script the parser just inserted is not begun here: the network may have cut
    // the document inside it, and the parser then appends the rest of its text later (other
    // tasks may run meanwhile). The script's action begins when its code runs (its first
    // registration or access finds it as document.currentScript: ensure()).
  }
}

// Child lists. Every script change of a node's children writes `DOMNode[<oid>].childList` of
// the node whose children change (the parent, for before/after/remove/replaceWith/outerHTML;
// the old parent too when a node moves), at the call's position when instrumented code made
// the call: two callbacks appending to one list in arrival order race on it. The parser's own
// insertions are not logged (parse chunks are chained in document order).
const kids = (self) => self;
const parentOf = (self) => nodeParent(self);
/** insertAdjacent*(where, …): the node itself inside it, its parent beside it. */
const adjacent = (self, args) => {
  const w = typeof args[0] === 'string' ? strToLower(args[0]) : '';
  return w === 'beforebegin' || w === 'afterend' ? nodeParent(self) : self;
};
/** document.write/writeln: the parent of the script that writes, else the document. */
const writeTarget = (self) => {
  const cs = docCurrentScript !== null && self === DOCUMENT ? docCurrentScript(self) : null;
  return cs !== null ? nodeParent(cs) : self;
};

/** Logs the child-list writes of `targets` (nodes or null) and of moved nodes' old parents. */
function childWrites(self, name, target, args) {
  const p = callPos(self, name);
  if (target !== null && isNode(target)) write(childLoc(target), args.length > 0 ? args[0] : undefined, p);
  for (let i = 0; i < args.length && i < 8; i++) {
    const a = args[i];
    if (a === null || typeof a !== 'object' || !isNode(a)) continue;
    const old = nodeParent(a);
    if (old !== null && old !== target) write(childLoc(old), a, p);
  }
}

/** The node whose child list a DOM call changes (`target`'s answer), or null: none. */
function changedParent(target, self, args) {
  try {
    const t = target(self, args);
    return t !== null && t !== undefined && isNode(t) ? t : null;
  } catch (_) {
    return null;
  }
}

/**
 * Wraps DOM-changing method `name`. `fix(self, args)`, when given, returns the arguments the
 * native gets (HTML strings with their code instrumented, dynamic.js); it never throws.
 * `target(self, args)`, when given, names the node whose child list the call changes.
 */
function flagDom(proto, name, fix, target) {
  const f = proto ? proto[name] : undefined;
  if (typeof f !== 'function') return;
  patch(proto, name, function () {
    if (passive()) return rApply(f, this, arguments);
    const args = fix !== undefined && REC ? fix(this, arguments) : arguments;
    const marks = repairOn ? repairInsert(args, target !== undefined ? changedParent(target, this, arguments) : undefined) : null;
    domByScript = true;
    if (info === null || depth === 0) ensure();
    if (REC && target !== undefined) {
      try {
        childWrites(this, name, target(this, arguments), arguments);
      } catch (_) {
        // not a node: the native call throws or does nothing
      }
    }
    depth++;
    try {
      return rApply(f, this, args);
    } finally {
      depth--;
      if (marks !== null) unmarkInserted(marks);
    }
  });
}

/**
 * Wraps DOM-changing setter `name`; `fix(self, v)` as in flagDom. `target` as in flagDom; the
 * write of a node's own children waits for the instrumented caller's log of the same location
 * (controller.js, deferWrite), which carries the position.
 */
function flagSetter(proto, name, fix, target) {
  wrapSetter(proto, name, (nSet) => function (v) {
    if (passive()) return rApply(nSet, this, [v]);
    const val = fix !== undefined && REC ? fix(this, v) : v;
    domByScript = true;
    if (depth === 0) ensure();
    if (REC && target !== undefined) {
      const t = target(this);
      if (t === this) deferWrite(locOf(childLoc(t)), v);
      else if (t !== null && isNode(t)) write(childLoc(t), v);
    }
    depth++;
    try {
      return rApply(nSet, this, [val]);
    } finally {
      depth--;
    }
  });
}

/** Replaces the setter of accessor `name` of `proto` with `make(nativeSetter)` (getter kept). */
function wrapSetter(proto, name, make) {
  if (!proto) return;
  const d = getDesc(proto, name);
  if (d === undefined || typeof d.set !== 'function') return;
  defProp(proto, name, { configurable: true, enumerable: d.enumerable, get: d.get, set: make(d.set) });
}

// Radio groups: checking one radio unchecks the others of its group (same name, same form
// owner, same tree), a write of their `checked` the page never makes itself.
const RADIO_CAP = 64;

/** Writes `checked` = false of the other radios of `el`'s group (`el` was checked at `p`). */
function radioGroupWrites(el, p) {
  if (inputName === null || inputForm === null || nodeRoot === null) return;
  const name = inputName(el);
  if (!name) return;
  const form = inputForm(el);
  const root = form !== null ? form : nodeRoot(el);
  let list;
  if (root === DOCUMENT) list = docQSA(root, 'input');
  else if (nodeType(root) === 1) list = elQSA(root, 'input');
  else return;
  let n = 0;
  for (let i = 0; i < nlLength(list) && n < RADIO_CAP; i++) {
    const x = nlItem(list, i);
    if (x === el || inputType(x) !== 'radio' || inputName(x) !== name || inputForm(x) !== form) continue;
    n++;
    writeEntry(objEntry(x, 'checked'), false, p);
  }
}

/** A script checking a radio unchecks the rest of its group too. */
function installRadioChecked() {
  if (!REC || NInput === null) return;
  wrapSetter(NInput.prototype, 'checked', (nSet) => function (v) {
    const r = rApply(nSet, this, [v]);
    const el = this;
    // After the radio's own write (instrumented code logs it next, with its position).
    if (v && inputType(el) === 'radio' && inputChecked(el)) {
      deferWrite(objEntry(el, 'checked'), true, (p) => radioGroupWrites(el, p));
    }
    return r;
  });
}

function wrapGetter(proto, name, onGet) {
  if (!proto) return;
  const d = getDesc(proto, name);
  if (d === undefined || typeof d.get !== 'function') return;
  const nGet = d.get;
  defProp(proto, name, {
    configurable: true,
    enumerable: d.enumerable,
    set: d.set,
    get: function () {
      const v = rApply(nGet, this, []);
      onGet(this, v);
      return v;
    },
  });
}

function installDom() {
  if (!DocP || !ElP) return; // a worker: no DOM
  const NP = NodeP;
  for (const n of ['appendChild', 'insertBefore', 'replaceChild', 'removeChild']) flagDom(NP, n, undefined, kids);
  for (const n of ['append', 'prepend', 'replaceChildren']) flagDom(ElP, n, undefined, kids);
  for (const n of ['before', 'after', 'replaceWith', 'remove']) flagDom(ElP, n, undefined, parentOf);
  for (const n of ['insertAdjacentElement', 'insertAdjacentText']) flagDom(ElP, n, undefined, adjacent);
  // HTML strings: their inline code is instrumented on the way in (dynamic.js, record mode).
  flagDom(ElP, 'insertAdjacentHTML', htmlAdjacent, adjacent);
  flagDom(ElP, 'setHTMLUnsafe', htmlFirst, kids);
  if (G.CharacterData) {
    for (const n of ['before', 'after', 'replaceWith', 'remove']) {
      flagDom(CharacterData.prototype, n, undefined, parentOf);
    }
  }
  flagDom(DocP, 'write', htmlWrite, writeTarget);
  flagDom(DocP, 'writeln', htmlWrite, writeTarget);
  flagDom(DocP, 'open', undefined, kids);
  flagSetter(ElP, 'innerHTML', htmlInner, kids);
  flagSetter(ElP, 'outerHTML', htmlOuter, parentOf);
  flagSetter(NP, 'textContent', undefined, kids);
  if (G.HTMLElement) {
    flagSetter(HTMLElement.prototype, 'innerText', undefined, kids);
    flagSetter(HTMLElement.prototype, 'outerText', undefined, parentOf);
  }
  if (G.ShadowRoot) {
    flagSetter(ShadowRoot.prototype, 'innerHTML', htmlInner, kids);
    flagDom(ShadowRoot.prototype, 'setHTMLUnsafe', htmlFirst, kids);
  }
  installRadioChecked();

  // Element creation: the creator forks events on the element; existence is written now.
  for (const n of ['createElement', 'createElementNS']) {
    const f = DocP[n];
    patch(DocP, n, function () {
      if (passive()) return rApply(f, this, arguments);
      const el = rApply(f, this, arguments);
      ensure();
      metaOf(el).by = info;
      if (REC) writeEntry(treeEntry(el), el);
      return el;
    });
  }
  // Resource URLs: the action that sets src forks the load/error events.
  for (const C of [G.HTMLImageElement, G.HTMLIFrameElement, G.HTMLScriptElement]) {
    if (!C) continue;
    wrapSetter(C.prototype, 'src', (nSet) => function (v) {
      if (passive()) return rApply(nSet, this, [v]);
      ensure();
      metaOf(this).by = info;
      if (repairOn && C !== G.HTMLScriptElement) repairForkLoad(this, v);
      return rApply(nSet, this, [v]);
    });
  }
  const nSetAttr = ElP.setAttribute;
  patch(ElP, 'setAttribute', function (name, value) {
    if (passive()) return rApply(nSetAttr, this, arguments);
    const n = strToLower(NativeString(name));
    if (n === 'src') {
      ensure();
      metaOf(this).by = info;
      if (repairOn && !(G.HTMLScriptElement && this instanceof HTMLScriptElement) && (
        (G.HTMLImageElement && this instanceof HTMLImageElement) || (G.HTMLIFrameElement && this instanceof HTMLIFrameElement))) {
        repairForkLoad(this, value);
      }
    } else if (REC && n.length > 2 && strCharCode(n, 0) === 111 && strCharCode(n, 1) === 110) {
      write(targetLabel(this) + '.' + strSlice(n, 2), value);
      if (typeof api.i === 'function' && typeof value === 'string') {
        let code = value;
        try {
          code = api.i(value, 'handler');
        } catch (_) {
          code = value;
        }
        return rApply(nSetAttr, this, [name, code]);
      }
    }
    return rApply(nSetAttr, this, arguments);
  });

  if (!REC) return;
  // Id lookups read the id map entry.
  const nGetById = DocP.getElementById;
  patch(DocP, 'getElementById', function (id) {
    const r = rApply(nGetById, this, arguments);
    if (this === DOCUMENT) read(idLoc(NativeString(id)), r, true);
    return r;
  });
  for (const P of [DocP, ElP, G.DocumentFragment ? DocumentFragment.prototype : null]) {
    if (!P) continue;
    for (const n of ['querySelector', 'querySelectorAll']) {
      const f = P[n];
      if (typeof f !== 'function' || !hasOwn(P, n)) continue;
      patch(P, n, function (sel) {
        const r = rApply(f, this, arguments);
        if (typeof sel === 'string') {
          const mm = reExec(ID_RE, sel);
          if (mm !== null) read(idLoc(mm[1]), n === 'querySelector' ? r : undefined, n === 'querySelector');
        }
        return r;
      });
    }
  }
  // document.cookie
  const cd = getDesc(DocP, 'cookie');
  if (cd !== undefined && cd.get && cd.set) {
    const cg = cd.get;
    const cs = cd.set;
    defProp(DocP, 'cookie', {
      configurable: true,
      enumerable: cd.enumerable,
      get: function () {
        const v = rApply(cg, this, []);
        read('Document[' + oid(this) + '].cookie');
        return v;
      },
      set: function (v) {
        write('Document[' + oid(this) + '].cookie', NativeString(v));
        return rApply(cs, this, [v]);
      },
    });
  }
  // className / classList reads; writes come from the MutationObserver (any API changes class).
  const classRead = (el) => readEntry(objEntry(el, 'className'));
  wrapGetter(ElP, 'className', classRead);
  wrapGetter(ElP, 'classList', classRead);
}

function startObserver() {
  if (!REC || !NMutationObserver || !DOCUMENT) return;
  const mo = new NMutationObserver(onMutations);
  moObserve(mo, DOCUMENT, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ['id', 'class', 'href'],
    attributeOldValue: true,
  });
  // What the parser produced before us (html, head, maybe meta): the first parse chunk.
  const all = docQSA(DOCUMENT, '*');
  if (nlLength(all) > 0) {
    begin({
      hid: 0, type: 0, kind: 'parse', stable: childStable(ROOT, 'parse', ''), label: 'parse HTML',
      from: -1, delay: undefined, joins: null, url: undefined, seq: nTaskSeq++, parent: ROOT,
    });
    lastChain = cur;
    for (let i = 0; i < nlLength(all); i++) noteElement(nlItem(all, i), true);
    end();
  }
}
