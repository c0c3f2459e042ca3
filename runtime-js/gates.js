// gates.js — what the proxy holds for this document so a policy can postpone it
// (docs/runtime-api.md, "Repair"; docs/proxy.md, "Page holds" and "Parser gates"), and the
// parser's resources as events the policy sees created.
//
// A gate is a response (or the rest of the document) the proxy keeps until this document
// lets it through with POST /__shepherd/hold/release?g=TOKEN&n=N. Scripts the page inserts,
// or writes with document.write, are marked here with this document's own token
// (`__shepherd_hold=TOKEN.N` appended to their URL). The parser's own scripts and images are
// marked by the proxy in the HTML, with a token it gave this document in the fragment of the
// runtime's URL (`#g=TOKEN`), and an inline script by an attribute on its start tag, the
// document's rest held right after it. A gate opens when the rules dispatch the event's
// begin, when its element leaves the document, and at the liveness limit; a parser-blocking
// or inline script held by rules that wait for the parsing it holds up opens at once (an
// incident). The markers are hidden from the page's `src`, `srcset`, `currentSrc` and
// getAttribute.
//
// While the policy watches the parser's resources (or an element's load is forked), a
// MutationObserver sees what the parser inserts (each script, inline script, image and
// iframe is forked then, in document order; the parser yields at every gate, so the observer
// runs before a held script could) and what leaves the document (a removed element's event
// counts as arrived). When only the parser's external scripts can be named and none is
// gated, no observer runs: they are forked when the policy next looks (syncParser).

const GATE_PARAM = '__shepherd_hold';
const GATE_ATTR = '__shepherd_hold';
const HTTP_RE = /^https?:/;
const MARKER_RE = /[?&]__shepherd_hold=([0-9a-f]{32})\.([0-9]+)/;
const SCRIPT_TAG_RE = /<script(?=[\s/>])/gi;
const gated = new NativeWeakMap(); // element whose URL attributes carry a marker -> 1
const raised = new NativeWeakMap(); // element whose fetchpriority the runtime set -> 1
// The runtime's own spelling of `high` (keywords are case-insensitive): what reads the DOM
// from outside the page (the explorer's end state) tells it from one the page wrote.
const RAISED = 'High';
let hidden = false; // hideMarkers ran
const gates = []; // {el, tok, n, pev, at, by, done, stalls, inline}
const written = objCreate(null); // marked src written by document.write -> its gate
const pendingInline = []; // inline scripts forked, not yet run: {el, pev}
const PARSER = POL !== null && typeof POL.parser === 'object' && POL.parser !== null ? POL.parser : {};
const PARSER_GATES = typeof PARSER.gates === 'object' && PARSER.gates !== null ? PARSER.gates : {};
const PARSER_WATCH = isArray(PARSER.watch) ? PARSER.watch : [];
let gateToken = ''; // this document's own token: scripts it inserts or writes
let gateNext = 0;
let parserToken = ''; // the proxy's token for this document: the parser's resources
let repairMo = null;
const moDisconnect = NMutationObserver ? uncurry(NMutationObserver.prototype.disconnect) : null;
const imgSrcGet = G.HTMLImageElement ? getterOf(HTMLImageElement.prototype, 'src') : null;
const frameSrcGet = G.HTMLIFrameElement ? getterOf(HTMLIFrameElement.prototype, 'src') : null;

/** The token the proxy wrote into the fragment of the runtime's URL (`#g=…`), or ''. */
function proxyGateToken() {
  try {
    const src = OWN_SCRIPT !== null && scriptSrc !== null ? NativeString(scriptSrc(OWN_SCRIPT)) : '';
    const at = strIndexOf(src, '#g=');
    const tok = at >= 0 ? strSlice(src, at + 3, at + 35) : '';
    return reExec(/^[0-9a-f]{32}$/, tok) !== null ? tok : '';
  } catch (_) {
    return '';
  }
}

/** Draws this document's token, hides the markers, and starts watching the parser if asked. */
function installGates() {
  parserToken = proxyGateToken();
  if (POL.postponesScripts === true && nGetRandomValues && G.Uint8Array) {
    const b = new G.Uint8Array(16);
    nGetRandomValues(nCrypto, b);
    let s = '';
    for (let i = 0; i < b.length; i++) s += strSlice(numToString(b[i] + 256, 16), 1);
    gateToken = s;
    installWrite();
  }
  if (gateToken !== '' || parserToken !== '') {
    hideMarkers();
    trustedUrls();
  }
  if (PARSER_WATCH.length === 0 && parserToken === '') return;
  if (parserToken === '' && !policyMayNameLoads() && !watchesInline() && docScripts !== null && hcLength !== null &&
    DOCUMENT !== null) {
    scriptList = docScripts(DOCUMENT);
    parserLazy = true;
  } else {
    watchDocument();
  }
}

function watchesInline() {
  for (let i = 0; i < PARSER_WATCH.length; i++) if (PARSER_WATCH[i] === 'inline-script') return true;
  return false;
}

// Under Trusted Types (`require-trusted-types-for 'script'`) a script's `src` and
// document.write take only trusted values: a marked URL set as a string would throw in the
// page's own call (its appendChild). The runtime's own policy, created before the page's
// scripts (and a `<meta>` policy) run, vouches for the URLs it marks and unmarks, which are the
// page's own with the marker added or taken off. Where no policy can be made (a header
// policy allowing other names only), a script whose URL cannot be marked is not gated.
let ttPolicy = null;
const ttScriptUrl = (s) => rApply(ttPolicy.createScriptURL, ttPolicy, [s]);
const NTrustedHTML = G.TrustedHTML || null;

function trustedUrls() {
  const tt = G.trustedTypes;
  if (ttPolicy !== null || !tt || typeof tt.createPolicy !== 'function') return;
  try {
    ttPolicy = rApply(tt.createPolicy, tt, ['shepherd-runtime', {
      createScriptURL: (u) => u,
      createHTML: (h) => h,
    }]);
  } catch (_) {
    ttPolicy = null;
  }
}

/** Sets script `el`'s `src` attribute to `v` (trusted as the runtime's): false when refused. */
function setScriptSrc(el, v) {
  try {
    elSetAttr(el, 'src', ttPolicy !== null ? ttScriptUrl(v) : v);
    return true;
  } catch (_) {
    return false;
  }
}

/** `s` without the hold markers in it (each is the last parameter of its URL's query). */
function stripMarkers(s) {
  if (typeof s !== 'string') return s;
  const key = GATE_PARAM + '=';
  let out = '';
  let from = 0;
  let at = strIndexOf(s, key, 0);
  while (at > 0) {
    const sep = strCharCode(s, at - 1);
    let e = at + key.length;
    let hex = 0;
    while (hex < 32 && e < s.length && isHexDigit(strCharCode(s, e))) {
      e++;
      hex++;
    }
    const dot = e < s.length && strCharCode(s, e) === 46;
    let d = dot ? e + 1 : e;
    while (d < s.length && strCharCode(s, d) >= 48 && strCharCode(s, d) <= 57) d++;
    if ((sep === 63 || sep === 38) && hex === 32 && dot && d > e + 1) {
      out += strSlice(s, from, at - 1);
      from = d;
    }
    at = strIndexOf(s, key, mathMax(at + 1, from));
  }
  return from === 0 ? s : out + strSlice(s, from);
}

function isHexDigit(c) {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
}

/**
 * The page reads its own URLs (`src`, `srcset`, `currentSrc`, getAttribute) without markers,
 * and no `fetchpriority` the runtime set (`getAttribute`, `fetchPriority`). Installed once.
 */
function hideMarkers() {
  if (hidden) return;
  hidden = true;
  const hide = (C, name, f) => {
    const P = C ? C.prototype : null;
    const d = P ? getDesc(P, name) : undefined;
    if (d === undefined || typeof d.get !== 'function') return;
    const nGet = d.get;
    defProp(P, name, {
      configurable: true, enumerable: d.enumerable, set: d.set,
      get: function () {
        return f(this, rApply(nGet, this, []));
      },
    });
  };
  const unmarked = (el, v) => (wmHas(gated, el) ? stripMarkers(v) : v);
  const unraised = (el, v) => (v === 'high' && wmHas(raised, el) ? 'auto' : v);
  hide(G.HTMLScriptElement, 'src', unmarked);
  hide(G.HTMLImageElement, 'src', unmarked);
  hide(G.HTMLImageElement, 'srcset', unmarked);
  hide(G.HTMLImageElement, 'currentSrc', unmarked);
  hide(G.HTMLScriptElement, 'fetchPriority', unraised);
  hide(G.HTMLImageElement, 'fetchPriority', unraised);
  if (elGetAttrNative) {
    patch(ElP, 'getAttribute', function (name) {
      const v = rApply(elGetAttrNative, this, arguments);
      if (v === null) return v;
      if (v === RAISED && wmHas(raised, this) && strToLower(NativeString(name)) === 'fetchpriority') return null;
      return wmHas(gated, this) ? stripMarkers(v) : v;
    });
  }
}

/**
 * Asks for the load of `el` (a script or image the page made, not yet loading) at high
 * priority while the document is parsing. Chromium does not send a low-priority request (an
 * inserted script, an image) to an HTTP/1.1 host while the head's parser-blocking scripts are
 * in flight, and a held one stays in flight: a rule holding the next parser script until such
 * a load has arrived would wait for the liveness limit. The page reads no `fetchpriority` it
 * did not set (hidden like the markers); one it set itself is kept.
 */
function raisePriority(el) {
  if (elSetAttr === null || elHasAttr(el, 'fetchpriority') || !parsingNow()) return;
  elSetAttr(el, 'fetchpriority', RAISED);
  wmSet(raised, el, 1);
  hideMarkers();
}

/** `url` with this document's marker for gate `n` (at the end of its query, before any fragment). */
function marked(url, tok, n) {
  const hash = strIndexOf(url, '#');
  const base = hash >= 0 ? strSlice(url, 0, hash) : url;
  const frag = hash >= 0 ? strSlice(url, hash) : '';
  return base + (strIndexOf(base, '?') >= 0 ? '&' : '?') + GATE_PARAM + '=' + tok + '.' + n + frag;
}

function addGate(el, tok, n, pev, stalls) {
  const gt = { el, tok, n, pev, at: dateNow(), by: null, done: false, stalls, inline: pev.kind === 'inline-script' };
  gates[gates.length] = gt;
  recheckSoon();
  return gt;
}

// ---- scripts the page inserts or writes -------------------------------------------------------

/**
 * fork(·, v) for scripts the page inserts (`nodes`: the inserted nodes, not yet connected;
 * `parent`: where they go, null when nowhere, undefined when unknown). A script put into a
 * tree outside the document does not run until that tree is inserted, maybe never: it is
 * forked then, with its tree. Returns the scripts whose `src` it marked (null: none), for
 * unmarkInserted once the insertion is done.
 */
function repairInsert(nodes, parent) {
  if (parent === null || (parent !== undefined && nodeConnected !== null && !nodeConnected(parent))) return null;
  let marks = null;
  const fork = (el) => {
    const m = forkScript(el);
    if (m !== null) {
      if (marks === null) marks = [];
      marks[marks.length] = m;
    }
  };
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (n === null || typeof n !== 'object' || !isNode(n)) continue;
    const t = nodeType(n);
    if (t === 1 && elLocalName(n) === 'script') fork(n);
    if ((t === 1 || t === 11) && nodeFirstChild(n) !== null) {
      const inner = t === 1 ? elQSA(n, 'script[src]') : fragQSA !== null ? fragQSA(n, 'script[src]') : null;
      if (inner === null) continue;
      for (let j = 0; j < nlLength(inner); j++) fork(nlItem(inner, j));
    }
  }
  return marks;
}

/**
 * After the insertion that marked them: each script's `src` attribute as the page wrote it.
 * A connected script has started its fetch (with the marker) and reads its `src` no more, so
 * the page finds it by its own URL again (`script[src="…"]`, a loader's check that a script
 * is already there; with the marker it inserted the script again). One the insertion did not
 * connect (the call threw) is no longer gated: nothing will ask for its marked URL.
 */
function unmarkInserted(marks) {
  for (let i = 0; i < marks.length; i++) {
    const m = marks[i];
    if (elGetAttr(m.el, 'src') !== m.marked) continue; // the page set another since
    setScriptSrc(m.el, m.raw);
    if (!nodeConnected(m.el)) {
      wmDelete(scriptPevs, m.el);
      repairCancelled(m.pev);
    }
  }
}

/** A gated parser or written script has run: its `src` attribute loses the marker (as above). */
function unmarkRan(el) {
  const v = elGetAttr(el, 'src');
  if (v === null) return;
  const raw = stripMarkers(v);
  if (raw !== v) setScriptSrc(el, raw);
}

/** Forks inserted script `el`; {el, raw, marked, pev} when its `src` was marked, else null. */
function forkScript(el) {
  if (nodeConnected(el) || !elHasAttr(el, 'src') || wmHas(scriptPevs, el) || !isJsType(el)) return null;
  const url = scriptSrc(el);
  const pev = newPev('script', 'script', el, url, currentPev());
  pev.how = 'inserted';
  keepElementPev(scriptPevs, el, pev);
  raisePriority(el);
  listenScript(el, pev);
  policyOp('fork', pev);
  watchDocument();
  // Not a module: its URL is its identity (a marked one would be evaluated again as a module
  // of its own when another imports it), as the rewriter leaves the parser's modules.
  let mark = null;
  if (gateToken !== '' && reExec(HTTP_RE, url) !== null && !isModuleScript(el)) {
    const n = ++gateNext;
    const raw = elGetAttr(el, 'src');
    const m = { el, raw, marked: marked(raw, gateToken, n), pev };
    if (setScriptSrc(el, m.marked)) {
      mark = m;
      wmSet(gated, el, 1);
      addGate(el, gateToken, n, pev, false);
    }
  }
  recheckSoon();
  return mark;
}

function listenScript(el, pev) {
  const ran = () => {
    if (wmHas(gated, el)) unmarkRan(el);
    scriptArrived(pev);
  };
  nAddEL(el, 'load', ran, false);
  nAddEL(el, 'error', ran, false);
}

/** A script ran (its load or error event follows its execution). */
function scriptArrived(pev) {
  if (pev.arrived) return;
  if (!pev.began) {
    // Nothing held it: its begin is seen now, as it ends.
    pev.began = true;
    policyOp('begin', pev);
  }
  policyArrived(pev);
  recheckSoon();
}

/** document.write/writeln: external scripts in the markup are marked and forked now. */
function installWrite() {
  if (!DocP) return;
  for (const name of ['write', 'writeln']) {
    const nWrite = DocP[name];
    if (typeof nWrite !== 'function') continue;
    patch(DocP, name, function () {
      if (repairOn && this === DOCUMENT && writesIntoParser()) markWritten(arguments);
      return rApply(nWrite, this, arguments);
    });
  }
}

/**
 * Whether document.write now writes into the parser's input: the document is loading and a
 * parser-blocking or inline script of the parser, or a written one, is running. Chromium
 * ignores a write from an async or deferred script, and a write with no script running would
 * open a new document: a script in such markup never runs, so forking it would make a rule
 * (a network FIFO) wait for it until the liveness limit.
 */
function writesIntoParser() {
  if (!parsingNow() || docCurrentScript === null) return false;
  syncParser();
  const cs = docCurrentScript(DOCUMENT);
  if (cs === null) return false;
  const pev = wmGet(scriptPevs, cs);
  if (pev !== undefined) return pev.kind === 'inline-script' || pev.how === 'blocking' || pev.written === true;
  // A script the runtime did not fork: an inline one inserted by the running script.
  return !elHasAttr(cs, 'async') && !(elHasAttr(cs, 'defer') && elHasAttr(cs, 'src')) && !isModuleScript(cs);
}

/** Marks the `src` of each script start tag in the written markup (`args`, changed in place). */
function markWritten(args) {
  // Markup the page had made trusted stays trusted with the markers in it (the runtime's
  // policy vouches for it), or is left unmarked; a string stays a string (a default policy of
  // the page sees it as it would have).
  let trusted = false;
  for (let i = 0; i < args.length; i++) if (NTrustedHTML !== null && args[i] instanceof NTrustedHTML) trusted = true;
  if (trusted && ttPolicy === null) return;
  let html = '';
  for (let i = 0; i < args.length; i++) html += NativeString(args[i]);
  SCRIPT_TAG_RE.lastIndex = 0;
  if (reExec(SCRIPT_TAG_RE, html) === null) return;
  let out = '';
  let from = 0;
  SCRIPT_TAG_RE.lastIndex = 0;
  for (let m = reExec(SCRIPT_TAG_RE, html); m !== null; m = reExec(SCRIPT_TAG_RE, html)) {
    const tag = startTag(html, m.index + 7);
    if (tag === null) break;
    const src = tag.attrs.src;
    const at = (name) => (tag.attrs[name] === undefined ? null : tag.attrs[name].value);
    const js = runsAsScript(at('type'), at('language'), tag.attrs.nomodule !== undefined);
    if (src !== undefined && js) {
      let url = '';
      try {
        url = NURL !== null ? new NURL(src.value, nodeBaseURI !== null ? nodeBaseURI(DOCUMENT) : pageHref()).href : src.value;
      } catch (_) {
        url = '';
      }
      if (reExec(HTTP_RE, url) !== null && !isModuleType(at('type'))) {
        const n = ++gateNext;
        const value = marked(src.value, gateToken, n);
        const pev = newPev('script', 'script', null, url, currentPev());
        pev.how = 'inserted';
        pev.written = true;
        policyOp('fork', pev);
        // Parser-blocking: the parser waits for it where it was written.
        written[value] = addGate(null, gateToken, n, pev, true);
        out += strSlice(html, from, src.start) + value;
        from = src.end;
      }
    }
    SCRIPT_TAG_RE.lastIndex = tag.end;
  }
  if (from === 0) return;
  const all = out + strSlice(html, from);
  args[0] = trusted ? rApply(ttPolicy.createHTML, ttPolicy, [all]) : all;
  args.length = 1; // one argument: a trusted one beside strings would not count as trusted
  watchDocument();
}

/**
 * The attributes of the start tag whose name ends at `at` in `html`: name -> {value, start,
 * end} (the offsets of the value as written, quotes excluded), and the offset after `>`.
 */
function startTag(html, at) {
  const attrs = objCreate(null);
  let i = at;
  const n = html.length;
  const space = (c) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13 || c === 47;
  while (i < n) {
    while (i < n && space(strCharCode(html, i))) i++;
    if (i >= n) return null;
    if (strCharCode(html, i) === 62) return { attrs, end: i + 1 };
    const ns = i;
    while (i < n) {
      const c = strCharCode(html, i);
      if (space(c) || c === 61 || c === 62) break;
      i++;
    }
    const name = strToLower(strSlice(html, ns, i));
    while (i < n && space(strCharCode(html, i)) && strCharCode(html, i) !== 47) i++;
    if (i < n && strCharCode(html, i) === 61) {
      i++;
      while (i < n && space(strCharCode(html, i)) && strCharCode(html, i) !== 47) i++;
      const q = i < n ? strCharCode(html, i) : 0;
      let vs;
      let ve;
      if (q === 34 || q === 39) {
        vs = i + 1;
        ve = strIndexOf(html, q === 34 ? '"' : "'", vs);
        if (ve < 0) return null;
        i = ve + 1;
      } else {
        vs = i;
        while (i < n && !space(strCharCode(html, i)) && strCharCode(html, i) !== 62) i++;
        ve = i;
      }
      if (attrs[name] === undefined) attrs[name] = { value: strSlice(html, vs, ve), start: vs, end: ve };
    } else if (name !== '' && attrs[name] === undefined) {
      attrs[name] = { value: '', start: i, end: i };
    }
  }
  return null;
}

// ---- the parser's resources -------------------------------------------------------------------

/** Starts the observer (once): the parser's insertions, and elements leaving the document. */
function watchDocument() {
  if (repairMo !== null || !NMutationObserver || DOCUMENT === null) return;
  syncParser();
  parserLazy = false;
  if (!policyMayNameLoads() && docScripts !== null && hcLength !== null) scriptList = docScripts(DOCUMENT);
  repairMo = new NMutationObserver(repairMutations);
  moObserve(repairMo, DOCUMENT, { childList: true, subtree: true });
}

function parsingNow() {
  try {
    return docReadyState !== null && docReadyState(DOCUMENT) === 'loading';
  } catch (_) {
    return false;
  }
}

// `document.scripts` (live) when no rule can name an image's or iframe's load: then, until an
// element's event is forked, only the parser's new scripts matter, and the parser adds those
// at the end of the document, so a look at the end of this list replaces reading every record.
let scriptList = null;
const scriptsSeen = new NativeWeakMap(); // scripts the look at the end has passed -> 1

// The parser inserts every node of the document one record at a time, text nodes too, and
// this runs for each while the page loads: it reads no more of a record than it must (the
// observer asks for childList records only, so their type is known).
function repairMutations(records) {
  if (!repairOn) {
    if (repairMo !== null && moDisconnect !== null) moDisconnect(repairMo);
    return;
  }
  const parsing = parsingNow();
  if (scriptList !== null && !elementPevs) {
    if (parsing) newParserScripts();
    if (pendingInline.length > 0) inlineProgress();
    return;
  }
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const added = mrAdded(r);
    const n = nlLength(added);
    for (let j = 0; j < n; j++) visit(nlItem(added, j), parserAdded, parsing);
    if (!elementPevs) continue;
    const removed = mrRemoved(r);
    for (let j = 0; j < nlLength(removed); j++) visit(nlItem(removed, j), removedEl);
  }
  if (pendingInline.length > 0) inlineProgress();
}

// When only the parser's external scripts can be named (no gate, no inline script, image or
// iframe watched), no observer runs while the page loads: the policy can only tell a script
// was created when it next evaluates an operation (policyOp), or when the script's execution
// or load is looked at, so the scripts the parser added since the last look are forked
// then, in document order, before that operation. Until DOMContentLoaded's begin, which
// looks one last time; the parser adds no script after it.
let parserLazy = false;
let parserSyncing = false;

/** The lazy look (above): forks the parser's scripts added since the last one. */
function syncParser() {
  if (!parserLazy || parserSyncing) return;
  parserSyncing = true;
  try {
    newParserScripts();
  } finally {
    parserSyncing = false;
  }
}

/** The scripts at the end of the document not looked at yet, in document order. */
function newParserScripts() {
  const n = hcLength(scriptList);
  let i = n;
  while (i > 0 && !wmHas(scriptsSeen, hcItem(scriptList, i - 1))) i--;
  for (; i < n; i++) {
    const el = hcItem(scriptList, i);
    wmSet(scriptsSeen, el, 1);
    parserScript(el, true);
  }
}

/**
 * `f(el, arg)` on `n`, a node of a record, when it is an element, and on the scripts, images
 * and iframes inside it.
 */
function visit(n, f, arg) {
  if (nodeType(n) !== 1) return;
  f(n, arg);
  if (nodeFirstChild(n) === null) return;
  const inner = elQSA(n, 'script,img,iframe');
  for (let i = 0; i < nlLength(inner); i++) f(nlItem(inner, i), arg);
}

function parserAdded(el, parsing) {
  const tag = elLocalName(el);
  if (tag === 'script') {
    if (G.HTMLScriptElement && el instanceof HTMLScriptElement) parserScript(el, parsing);
  } else if (tag === 'img' || tag === 'iframe') {
    elementLoad(el, tag, parsing);
  }
}

/** How script element `el` loads (`parser`: the parser inserted it). */
function scriptLoading(el, parser) {
  if (!parser) return 'inserted';
  const module = isModuleScript(el);
  if (scriptAsync(el)) return 'async';
  if (module || (scriptDefer(el) && elHasAttr(el, 'src'))) return 'defer';
  return 'blocking';
}

function parserScript(el, parsing) {
  if (wmHas(scriptPevs, el) || !isJsType(el)) return;
  const raw = elHasAttr(el, 'src') ? elGetAttr(el, 'src') : null;
  if (raw !== null) {
    const w = written[raw];
    if (w !== undefined) {
      // Written by document.write: forked by the write; now its element is known.
      delete written[raw];
      w.el = el;
      w.pev.target = el;
      wmSet(gated, el, 1);
      keepElementPev(scriptPevs, el, w.pev);
      listenScript(el, w.pev);
      return;
    }
  }
  if (!parsing) return; // inserted by markup APIs: such scripts do not run
  const inline = raw === null;
  if (inline && isModuleScript(el)) return; // inline modules: not named
  const pev = inline ? newPev('inline-script', 'inline-script', el, '', null) :
    newPev('script', 'script', el, stripMarkers(scriptSrc(el)), null);
  pev.how = scriptLoading(el, true);
  let num = NaN;
  if (inline) {
    const n = elGetAttr(el, GATE_ATTR);
    if (n !== null) elRemoveAttr(el, GATE_ATTR);
    if (n !== null && parserToken !== '') num = +n;
  } else {
    const m = reExec(MARKER_RE, raw);
    if (m !== null && m[1] === parserToken) num = +m[2];
  }
  const gate = num === num && num > 0;
  if (!gate && !policyMayName(pev)) {
    wmSet(unnamedScripts, el, 1);
    return;
  }
  keepElementPev(scriptPevs, el, pev);
  policyOp('fork', pev);
  if (inline) {
    if (gate) addGate(el, parserToken, num, pev, true);
    else pendingInline[pendingInline.length] = { el, pev };
  } else {
    listenScript(el, pev);
    if (gate) {
      wmSet(gated, el, 1);
      addGate(el, parserToken, num, pev, pev.how === 'blocking');
    }
  }
  recheckSoon();
}

/** The load of an image or iframe the parser (or markup a script set) created. */
function elementLoad(el, tag, parsing) {
  if (wmHas(loadPevs, el)) return;
  let url = '';
  try {
    const get = tag === 'img' ? imgSrcGet : frameSrcGet;
    url = get !== null ? stripMarkers(NativeString(get(el))) : '';
  } catch (_) {
    url = '';
  }
  const pev = newPev('event', 'load', el, url, parsing ? null : currentPev());
  pev.res = tag;
  let m = null;
  if (tag === 'img' && parserToken !== '') {
    const raw = elGetAttr(el, 'src');
    const raws = elGetAttr(el, 'srcset');
    m = reExec(MARKER_RE, raw !== null ? raw : '') || reExec(MARKER_RE, raws !== null ? raws : '');
    if (m !== null && m[1] !== parserToken) m = null;
  }
  // One a script created has a creator (a `from` filter may name it); the parser's, none.
  if (m === null && pev.creator === null && !policyMayName(pev)) return;
  keepElementPev(loadPevs, el, pev);
  policyOp('fork', pev);
  if (m !== null) {
    wmSet(gated, el, 1);
    addGate(el, parserToken, +m[2], pev, false);
  }
  recheckSoon();
}

/** An element left the document: the event it was to run counts as arrived. */
function removedEl(el) {
  if (nodeConnected(el)) return; // moved, not removed
  const sp = wmGet(scriptPevs, el);
  if (sp !== undefined && !sp.began) repairCancelled(sp);
  const lp = wmGet(loadPevs, el);
  if (lp !== undefined && !lp.began) repairCancelled(lp);
}

/** Some node follows `el` in the document: the parser went past it. */
function followed(el) {
  for (let n = el; n !== null && n !== DOCUMENT; n = nodeParent(n)) {
    if (nodeNextSibling(n) !== null) return true;
  }
  return false;
}

/** Inline scripts the parser went past have run. */
function inlineProgress() {
  let j = 0;
  for (let i = 0; i < pendingInline.length; i++) {
    const p = pendingInline[i];
    if (followed(p.el)) scriptArrived(p.pev);
    else pendingInline[j++] = p;
  }
  pendingInline.length = j;
}

/** DOMContentLoaded: every parser script has run. */
function parserScriptsRan() {
  syncParser();
  parserLazy = false;
  for (let i = 0; i < pendingInline.length; i++) scriptArrived(pendingInline[i].pev);
  pendingInline.length = 0;
}

// ---- opening gates -----------------------------------------------------------------------------

/**
 * Whether every condition instance `x` waits for needs the document parsed further first: a
 * parser-blocking or inline script it holds would hold up what it waits for. 'parsing' when a
 * condition is the parsing itself (`parsed`, `loaded`, a deferred script): a rule that cannot
 * be kept, an incident. 'written' when each waits for a written script whose markup the
 * parser has not reached (its element is not there yet): a script that an earlier written
 * script writes (an ad tag's) comes before such a script in the parser's input, so the
 * browser's order is the only one there is, though a network FIFO names the other. Else null.
 */
function waitsOnParsing(x) {
  if (x === null || x === undefined) return null;
  const u = x.r.until || [];
  if (u.length === 0) return null;
  let why = 'written';
  for (let i = 0; i < u.length; i++) {
    const e = u[i];
    if (e.parsed === true || e.loaded === true) {
      why = 'parsing';
      continue;
    }
    if (e.arrived !== undefined) {
      const v = x.env[e.arrived];
      if (v !== undefined && !v.arrived && v.kind === 'script') {
        if (v.how === 'defer') {
          why = 'parsing';
          continue;
        }
        if (v.written === true && v.target === null) continue;
      }
    }
    return null;
  }
  return why;
}

/** Re-decides every closed gate: opened when its begin is dispatched, or overdue. */
function recheckGates(now) {
  for (let i = 0; i < gates.length; i++) {
    const gt = gates[i];
    if (gt.done) continue;
    const overdue = now - gt.at >= policyMaxDelay(gt.by);
    let res = overdue ? { action: A_DISPATCH, by: gt.by } : policyOp('begin', gt.pev);
    if (overdue) repairIncident(gt.by, gt.pev, now - gt.at, 'held longer than max-delay: released');
    else if (res.action !== A_DISPATCH && gt.stalls) {
      const why = waitsOnParsing(res.by);
      if (why === 'parsing') repairIncident(res.by, gt.pev, now - gt.at, 'waits for the parsing it holds up: released');
      if (why !== null) res = { action: A_DISPATCH, by: res.by };
    }
    if (res.action === A_DISPATCH) {
      openGate(gt, now);
    } else if (gt.by === null || gt.by === undefined) {
      gt.by = res.by;
    }
  }
  let k = 0;
  for (let i = 0; i < gates.length; i++) if (!gates[i].done) gates[k++] = gates[i];
  gates.length = k;
}

function openGate(gt, now) {
  gt.done = true;
  // A script's begin is this decision (its execution follows its delivery); an image's is
  // its load event, decided when it is dispatched.
  if (gt.pev.kind !== 'event') gt.pev.began = true;
  if (gt.by !== null && gt.by !== undefined) {
    rep.postponed++;
    if (rep.delays.length < 2000) rep.delays[rep.delays.length] = now - gt.at;
  }
  if (gt.inline && gt.el !== null) pendingInline[pendingInline.length] = { el: gt.el, pev: gt.pev };
  gateRelease(gt);
}

/** `pev` will not run: its gate opens (nothing waits for what it would deliver). */
function gateCancelled(pev) {
  for (let i = 0; i < gates.length; i++) {
    const gt = gates[i];
    if (gt.pev === pev && !gt.done) {
      gt.done = true;
      gateRelease(gt);
    }
  }
}

function gatesPending() {
  for (let i = 0; i < gates.length; i++) if (!gates[i].done) return true;
  return false;
}

/** When the first closed gate reaches its liveness limit (Infinity: none is closed). */
function gatesNextDue() {
  let t = Infinity;
  for (let i = 0; i < gates.length; i++) if (!gates[i].done) t = mathMin(t, gates[i].at + policyMaxDelay(gates[i].by));
  return t;
}

/** Tells the proxy to let this document's held response (or document rest) through. */
function gateRelease(gt) {
  if (!nFetch) return;
  const q = '/__shepherd/hold/release?t=' + encodeURIComponent(PAGE_TOKEN) + '&g=' + gt.tok + '&n=' + gt.n;
  try {
    promiseThen(rApply(nFetch, G, [q, { method: 'POST', keepalive: true, credentials: 'omit' }]), undefined, () => undefined);
  } catch (_) {
    // the proxy lets it through at its own limit
  }
}
