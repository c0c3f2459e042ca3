// policy.js — the repair policy engine (docs/policies.md): the compiled rules, operation
// predicates, expirations, template instantiation and EventRaceCommander's update rule.
//
// An event the policy can talk about is a `pev`: {id, kind, type, target, url, state, delay,
// creator, user, how, res, began, arrived}. `kind` is 'event' (a DOM event; `type` its type,
// `user` when it is trusted input; `res` 'img' or 'iframe' for the load of one), 'xhr' (an
// XMLHttpRequest event; `state` its readyState), 'timer', 'interval', 'raf', 'idle',
// 'fetch', 'script' (an external script; `how` 'blocking', 'async', 'defer' or 'inserted')
// or 'inline-script'. The wrappers report two operations: fork(·, v) when the page (or the
// parser) creates v (policyOp('fork', v)) and begin(u) when u is about to run
// (policyOp('begin', u)). An operation activates every rule whose predicate matches it and
// that has not expired; the action is the strongest one (dispatch < postpone < discard),
// activated `once` rules are removed and the templates of activated rules are instantiated
// with the matched event bound.
//
// Arrival (EventRaceCommander's expiration): `arrived(u)` holds once u's handlers have run,
// not when they begin, so what u's handler forks is still seen by a rule waiting for u (a
// request sent from another request's answer). u is marked arriving when its action begins
// (policyArriving) and arrived (policyArrived) when the next action of another event begins
// or, at the latest, in a task queued behind u's (an XHR's events at readyState 4 are one
// event, dispatched in one task). A cancelled timer, an aborted request and a removed
// element count as arrived: nothing else of theirs will run. How held events are kept and
// released is repair.js's business.

const POL = CONFIG.policy || null;
const POL_JS = typeof POLICY_JS === 'object' && POLICY_JS !== null ? POLICY_JS : [];
const A_DISPATCH = 0;
const A_POSTPONE = 1;
const A_DISCARD = 2;
/** Rule instances beyond this are not added (a runaway waitrec cascade); reported once. */
const MAX_INSTS = 4000;

const USER_SET = objCreate(null);
let polList = []; // policies that apply to this page
let insts = []; // active rule instances {r, p, env, at, dead, discardAt}
let pevNext = 1;
let parsedFlag = false;
let loadedFlag = false;
const arrivedList = []; // pevs that arrived, for `arrived(pattern)` expirations
const arriving = []; // pevs whose action began and whose turn has not ended yet
let arrivalQueued = false;
let arrivalPort = null;
let hasMatchExpiry = false;
const reCache = objCreate(null);
let instsCapped = false;
let forksSeen = 0; // fork operations: how many events the policy saw created

/** The regular expression of a compiled glob (cached; an invalid one matches nothing). */
function polRegex(src) {
  let re = reCache[src];
  if (re === undefined) {
    try {
      re = new NativeRegExp(src);
    } catch (_) {
      re = null;
    }
    reCache[src] = re;
  }
  return re;
}

function polTest(src, s) {
  const re = polRegex(src);
  return re !== null && typeof s === 'string' && reExec(re, s) !== null;
}

/** Loads the compiled policy: the policies whose scope matches this page, their rules. */
function policyLoad() {
  if (POL === null || typeof POL !== 'object') return false;
  const ut = POL.userTypes || [];
  for (let i = 0; i < ut.length; i++) USER_SET[ut[i]] = 1;
  const href = pageHref();
  const all = POL.policies || [];
  const now = dateNow();
  for (let i = 0; i < all.length; i++) {
    const p = all[i];
    const scope = p.scope || [];
    let applies = scope.length === 0;
    for (let j = 0; !applies && j < scope.length; j++) applies = polTest(scope[j], href);
    if (!applies) continue;
    const idx = polList.length;
    polList[idx] = p;
    const rules = p.rules || [];
    for (let j = 0; j < rules.length; j++) insts[insts.length] = { r: rules[j], p: idx, env: objCreate(null), at: now, dead: false, discardAt: 0 };
  }
  for (let i = 0; i < insts.length; i++) noteRule(insts[i].r);
  const tpls = polList;
  for (let i = 0; i < tpls.length; i++) {
    const ts = tpls[i].templates || {};
    for (const k in ts) {
      const rs = ts[k].rules || [];
      for (let j = 0; j < rs.length; j++) noteRule(rs[j]);
    }
  }
  return insts.length > 0;
}

function noteRule(r) {
  const u = r.until || [];
  for (let i = 0; i < u.length; i++) if (u[i].match !== undefined) hasMatchExpiry = true;
  noteTerms(r.pred);
  for (let i = 0; i < u.length; i++) if (u[i].match !== undefined) noteTerms(u[i].match);
}

// Every term of the policy (predicates, `from` filters, `arrived(…)` patterns) without its
// `on` filters, which may judge an element differently later: what an event must match for
// any rule to be able to name it. null once a name (a bound variable) is among them.
let nameTerms = [];

function noteTerms(pred) {
  for (let i = 0; i < pred.length && nameTerms !== null; i++) {
    const t = pred[i];
    if (t.k === 'var') {
      nameTerms = null;
      return;
    }
    const f = t.f;
    const kept = [];
    for (let j = 0; f && j < f.length; j++) {
      if (f[j].on !== undefined) continue;
      if (f[j].from !== undefined) noteTerms([f[j].from]);
      kept[kept.length] = f[j];
    }
    if (nameTerms !== null) nameTerms[nameTerms.length] = { k: t.k, type: t.type, f: kept };
  }
}

const NO_ENV = objCreate(null);

/** Whether some rule could name the load of an image or iframe. */
function policyMayNameLoads() {
  if (nameTerms === null) return true;
  for (let i = 0; i < nameTerms.length; i++) {
    const t = nameTerms[i];
    if (t.k === 'img' || t.k === 'iframe' || (t.k === 'type' && t.type === 'load')) return true;
  }
  return false;
}

/**
 * Whether some rule could name `pev`, a resource of the parser (it has no creator). When none
 * can, its fork and its arrival change nothing, and the runtime leaves it alone: most of a
 * page's scripts are parser-blocking, and a policy about async scripts need not see them.
 */
function policyMayName(pev) {
  if (nameTerms === null) return true;
  for (let i = 0; i < nameTerms.length; i++) if (termMatches(nameTerms[i], pev, NO_ENV)) return true;
  return false;
}

// The DOM event types some rule could name (see policyMayNameType); built on first use, once
// every rule and template has been noted. null: any type (a name among the terms).
let namedTypes;
// Whether an `xhr` term filters by state, so that it can name a response before it is done.
let namedXhrStates = true;

/**
 * Whether some rule could name a DOM event of `type`, whatever its target: a `user` type, a
 * `type` term of that type, or the load of an image or iframe. Only `user`, `type`, `img` and
 * `iframe` terms match a DOM event's pev (an XHR's events are matched by `xhr` too).
 */
function policyMayNameType(type) {
  if (namedTypes === undefined) noteNamedTypes();
  return namedTypes === null || namedTypes[type] === 1;
}

/** Whether some rule could name an XHR's event before its response is done (readyState < 4). */
function policyMayNameXhrState() {
  if (namedTypes === undefined) noteNamedTypes();
  return namedXhrStates;
}

function noteNamedTypes() {
  if (nameTerms === null) {
    namedTypes = null;
    return;
  }
  namedTypes = objCreate(null);
  namedXhrStates = false;
  for (const t in USER_SET) namedTypes[t] = 1;
  for (let i = 0; i < nameTerms.length; i++) {
    const t = nameTerms[i];
    if (t.k === 'type') namedTypes[t.type] = 1;
    else if (t.k === 'img' || t.k === 'iframe') namedTypes.load = namedTypes.error = 1;
    else if (t.k === 'xhr' && hasStateFilter(t)) namedXhrStates = true;
  }
}

/** A new event the policy may talk about. */
function newPev(kind, type, target, url, creator) {
  return {
    id: pevNext++, kind, type, target, url: url || '', state: -1, delay: -1, creator: creator || null,
    user: false, how: '', res: '', began: false, arrived: false, written: false,
  };
}

// ---- predicates -------------------------------------------------------------------------------

function predMatches(pred, pev, env) {
  for (let i = 0; i < pred.length; i++) if (termMatches(pred[i], pev, env)) return true;
  return false;
}

function hasStateFilter(t) {
  const f = t.f;
  if (!f) return false;
  for (let i = 0; i < f.length; i++) if (f[i].state !== undefined) return true;
  return false;
}

function termMatches(t, pev, env) {
  if (pev === null || pev === undefined) return false;
  let ok;
  switch (t.k) {
    case 'var': ok = env[t.var] === pev; break;
    case 'user': ok = pev.kind === 'event' && pev.user && USER_SET[pev.type] === 1; break;
    case 'type': ok = (pev.kind === 'event' || pev.kind === 'xhr') && pev.type === t.type; break;
    case 'xhr': ok = pev.kind === 'xhr' && (pev.state === 4 || hasStateFilter(t)); break;
    case 'animation-frame': ok = pev.kind === 'raf'; break;
    case 'idle-callback': ok = pev.kind === 'idle'; break;
    case 'img': case 'iframe': ok = pev.kind === 'event' && pev.res === t.k; break;
    default: ok = pev.kind === t.k; // timer, interval, fetch, script, inline-script
  }
  if (!ok) return false;
  const f = t.f;
  if (!f) return true;
  for (let i = 0; i < f.length; i++) {
    if (filterMatches(f[i], pev, env) === (f[i].not === true)) return false;
  }
  return true;
}

function filterMatches(f, pev, env) {
  if (f.on !== undefined) return targetMatches(pev.target, f.on);
  if (f.url !== undefined) return polTest(f.url, pev.url);
  if (f.loading !== undefined) return pev.kind === 'script' && pev.how === f.loading;
  if (f.state !== undefined) return pev.state === f.state;
  if (f.from !== undefined) return pev.creator !== null && termMatches(f.from, pev.creator, env);
  if (f.delay !== undefined) {
    const d = pev.delay;
    if (d < 0) return false;
    const v = f.delay[1];
    switch (f.delay[0]) {
      case '<': return d < v;
      case '<=': return d <= v;
      case '>': return d > v;
      case '>=': return d >= v;
      default: return d === v;
    }
  }
  return false;
}

/** `on "selector"`: `window` and `document` name those targets; elements are matched natively. */
function targetMatches(target, sel) {
  if (target === null || target === undefined) return false;
  if (target === W || target === DOCUMENT) {
    const parts = strSplitComma(sel);
    for (let i = 0; i < parts.length; i++) {
      if ((parts[i] === 'window' && target === W) || (parts[i] === 'document' && target === DOCUMENT)) return true;
    }
    return false;
  }
  if (elMatches === null || !isNode(target) || nodeType(target) !== 1) return false;
  try {
    return elMatches(target, sel);
  } catch (_) {
    return false;
  }
}

function strSplitComma(s) {
  const out = [];
  let start = 0;
  for (let i = 0; i <= s.length; i++) {
    if (i === s.length || strCharCode(s, i) === 44) {
      let a = start;
      let b = i;
      while (a < b && strCharCode(s, a) === 32) a++;
      while (b > a && strCharCode(s, b - 1) === 32) b--;
      out[out.length] = strSlice(s, a, b);
      start = i + 1;
    }
  }
  return out;
}

// ---- expirations ------------------------------------------------------------------------------

/** Whether instance `x` has expired (any of its conditions holds). */
function instExpired(x, now) {
  if (x.dead) return true;
  const u = x.r.until;
  if (!u) return false;
  for (let i = 0; i < u.length; i++) {
    const e = u[i];
    if (e.parsed === true && parsedFlag) return true;
    if (e.loaded === true && loadedFlag) return true;
    if (e.arrived !== undefined) {
      const v = x.env[e.arrived];
      if (v !== undefined && v.arrived) return true;
    }
    if (e.after !== undefined && now - x.at >= e.after) return true;
    if (e.match !== undefined) {
      for (let j = 0; j < arrivedList.length; j++) if (predMatches(e.match, arrivedList[j], x.env)) return true;
    }
    if (e.js !== undefined) {
      const f = POL_JS[e.js];
      try {
        if (typeof f === 'function' && f()) return true;
      } catch (_) {
        // an expression that throws is false (the state it tests is not there yet)
      }
    }
  }
  return false;
}

/** Whether an expired instance stays expired (no `js` condition), so it can be dropped. */
function instFinal(x) {
  const u = x.r.until;
  if (!u) return false;
  for (let i = 0; i < u.length; i++) if (u[i].js !== undefined) return false;
  return true;
}

/** Drops instances that are dead or expired for good. */
function policyCompact(now) {
  let j = 0;
  for (let i = 0; i < insts.length; i++) {
    const x = insts[i];
    if (x.dead || (instFinal(x) && instExpired(x, now))) continue;
    insts[j++] = x;
  }
  insts.length = j;
}

// ---- operations --------------------------------------------------------------------------------

/**
 * Operation `op` ('begin' | 'fork') on `pev`: returns {action, by} where `by` is the
 * strongest activated instance (null when none), after applying the update (once-rules
 * removed, extensions added with the matched event bound).
 */
function policyOp(op, pev) {
  syncParser(); // the parser's scripts created since the last operation come first (gates.js)
  const now = dateNow();
  if (op === 'fork') forksSeen++;
  const act = [];
  for (let i = 0; i < insts.length; i++) {
    const x = insts[i];
    if (x.dead || x.r.op !== op || !predMatches(x.r.pred, pev, x.env) || instExpired(x, now)) continue;
    act[act.length] = x;
  }
  let best = A_DISPATCH;
  let by = null;
  for (let i = 0; i < act.length; i++) {
    const a = act[i].r.action;
    if (a > best || by === null) {
      if (a >= best) by = act[i];
      if (a > best) best = a;
    }
  }
  if (best === A_DISPATCH) by = null;
  for (let i = 0; i < act.length; i++) if (act[i].r.once) act[i].dead = true;
  for (let i = 0; i < act.length; i++) if (!extendsLikeEarlier(act, i)) extend(act[i], pev, now);
  if (act.length > 0) policyCompact(now);
  return { action: best, by };
}

/**
 * Whether an earlier instance of `act` adds exactly what `act[i]` would: the same rule of the
 * same policy, with equal values for every variable its `then` passes besides the bound one.
 * The active rules are a set; without this, k active WAITREC instances would each add
 * WAITFOR(w) and WAITREC(w) on a fork, doubling the instances with every fork while
 * initialisation is pending.
 */
function extendsLikeEarlier(act, i) {
  const x = act[i];
  const calls = x.r.then;
  if (!calls || calls.length === 0) return true;
  for (let j = 0; j < i; j++) {
    const y = act[j];
    if (y.r !== x.r || y.p !== x.p) continue;
    let same = true;
    for (let c = 0; c < calls.length && same; c++) {
      const args = calls[c].a;
      for (let k = 0; k < args.length; k++) {
        if (args[k] !== x.r.bind && x.env[args[k]] !== y.env[args[k]]) {
          same = false;
          break;
        }
      }
    }
    if (same) return true;
  }
  return false;
}

/** Instantiates the templates of activated instance `x`'s `then` with `pev` bound. */
function extend(x, pev, now) {
  const calls = x.r.then;
  if (!calls || calls.length === 0) return;
  const p = polList[x.p];
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    const tpl = p.templates ? p.templates[c.t] : undefined;
    if (!tpl) continue;
    const env = objCreate(null);
    for (let j = 0; j < tpl.params.length; j++) {
      const a = c.a[j];
      env[tpl.params[j]] = a === x.r.bind ? pev : x.env[a];
    }
    for (let j = 0; j < tpl.rules.length; j++) {
      if (insts.length >= MAX_INSTS) {
        if (!instsCapped) {
          instsCapped = true;
          repairIncident(x, pev, 0, 'more than ' + MAX_INSTS + ' active rules: rules stop being added');
        }
        return;
      }
      insts[insts.length] = { r: tpl.rules[j], p: x.p, env, at: now, dead: false, discardAt: 0 };
    }
  }
}

/**
 * The action of `pev` begins: the turns of the other events arriving have ended, so they
 * arrive now; `pev` arrives once its own turn is over (a task queued behind it).
 */
function policyArriving(pev) {
  arriveOthers(pev);
  if (pev === null || pev.arrived || pev.began) {
    if (pev !== null) pev.began = true;
    return;
  }
  pev.began = true;
  arriving[arriving.length] = pev;
  queueArrival();
}

/** Every arriving event but `keep` arrives (their handlers have run). */
function arriveOthers(keep) {
  if (arriving.length === 0) return;
  let j = 0;
  for (let i = 0; i < arriving.length; i++) {
    const p = arriving[i];
    if (p === keep) arriving[j++] = p;
    else policyArrived(p);
  }
  arriving.length = j;
}

/**
 * A task after the current one (and its microtasks) in which the arriving events arrive and
 * what is held is re-checked (repair.js, recheckSoon).
 */
function queueArrival() {
  if (arrivalQueued) return;
  arrivalQueued = true;
  const done = () => {
    arrivalQueued = false;
    arriveOthers(null);
    if (!recheckQueued) recheck();
  };
  if (nPostTask !== null) {
    nPostTask(schedulerObj, done, MARKER_TASK);
    return;
  }
  if (arrivalPort === null && NMessageChannel) {
    const mc = new NMessageChannel();
    portOnMessageSet(mc.port1, () => {
      if (arrivalQueued) done();
    });
    arrivalPort = mc.port2;
  }
  if (arrivalPort !== null) portPost(arrivalPort, 0);
  else rApply(nSetTimeout, G, [done, 0]);
}

/** `pev` will not run (a cancelled timer, an aborted request, a removed element): nothing waits for it any more. */
function policyCancelled(pev) {
  if (pev === null || pev === undefined || pev.arrived) return;
  pev.began = true;
  policyArrived(pev);
}

/** `pev` ran: its `arrived` conditions hold from now on. */
function policyArrived(pev) {
  if (pev.arrived) return;
  pev.arrived = true;
  if (pev.kind === 'event') {
    if (pev.type === 'DOMContentLoaded' && pev.target === DOCUMENT) parsedFlag = true;
    else if (pev.type === 'load' && pev.target === W) loadedFlag = true;
  }
  if (hasMatchExpiry && arrivedList.length < 20000) arrivedList[arrivedList.length] = pev;
}

/** Earliest time an `after` condition of an active instance comes due (Infinity: none). */
function policyNextDue() {
  let t = Infinity;
  for (let i = 0; i < insts.length; i++) {
    const u = insts[i].r.until;
    if (!u) continue;
    for (let j = 0; j < u.length; j++) if (u[j].after !== undefined) t = mathMin(t, insts[i].at + u[j].after);
  }
  return t;
}

/** Whether an active instance waits on a `js` condition (then it is checked periodically). */
function policyHasJs() {
  for (let i = 0; i < insts.length; i++) {
    const u = insts[i].r.until;
    if (!u) continue;
    for (let j = 0; j < u.length; j++) if (u[j].js !== undefined) return true;
  }
  return false;
}

/** The `max-delay` of the policy an instance comes from. */
function policyMaxDelay(x) {
  const p = x !== null && x !== undefined ? polList[x.p] : null;
  if (p && typeof p.maxDelayMs === 'number') return p.maxDelayMs;
  let m = 0;
  for (let i = 0; i < polList.length; i++) m = mathMax(m, polList[i].maxDelayMs || 0);
  return m > 0 ? m : 10000;
}

/** Whether the policy of instance `x` wants the spinner. */
function policySpinner(x) {
  const p = x !== null && x !== undefined ? polList[x.p] : null;
  return p ? p.spinner !== false : true;
}
