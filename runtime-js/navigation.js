// navigation.js — navigations blocked and traced. A tool that exercises or explores a page must
// stay on it: a link, a form or a script that would leave the page is stopped, and what would
// have happened is an event of the trace (docs/runtime-api.md, "Runtime: navigations"). The
// default action of a link is then an observable like any other: the blocked navigation is an
// action forked by the action that caused it (the click, the script), reading the link's
// `href`, so a script that rewrites the link races with the click, and an order in which the
// page's handler no longer cancels the click shows a navigation the recorded order did not.
//
// Off by default; `control.blockNavigations(true)` turns it on. Same-window navigations are
// seen through the Navigation API's `navigate` event, by a listener kept after the page's own
// (so a router that intercepts or cancels the navigation has done so when it decides);
// new windows (`window.open`, links and forms aimed at another window) are refused before the
// browser opens them.

const NAV = G.navigation && typeof G.navigation === 'object' ? G.navigation : null;
const NavEvP = G.NavigateEvent ? NavigateEvent.prototype : null;
const navDest = NavEvP ? getterOf(NavEvP, 'destination') : null;
const navCancelable = getterOf(EP, 'cancelable');
const navHashChange = NavEvP ? getterOf(NavEvP, 'hashChange') : null;
const navDownload = NavEvP ? getterOf(NavEvP, 'downloadRequest') : null;
const navSource = NavEvP ? getterOf(NavEvP, 'sourceElement') : null;
const navType = NavEvP ? getterOf(NavEvP, 'navigationType') : null;
const destUrl = G.NavigationDestination ? getterOf(NavigationDestination.prototype, 'url') : null;
const linkHref = G.HTMLAnchorElement ? getterOf(HTMLAnchorElement.prototype, 'href') : null;
const areaHref = G.HTMLAreaElement ? getterOf(HTMLAreaElement.prototype, 'href') : null;
const formAction = NForm ? getterOf(NForm.prototype, 'action') : null;
const nOpen = W && typeof W.open === 'function' ? W.open : null;

let blockingNav = false;
const intercepted = new NativeWeakSet(); // navigate events a page handler intercepted
const pagePrevented = new NativeWeakSet(); // events whose default the page cancelled itself
const blockedNavs = []; // what control.navigations() returns
const BLOCKED_CAP = 1000;
const navsToBegin = []; // recorded navigations whose action has not begun yet, oldest first

/** The page added a `navigate` listener: ours moves behind it. */
function keepNavigateLast(target) {
  if (target !== NAV || NAV === null) return;
  nRemoveEL(NAV, 'navigate', onNavigate, false);
  nAddEL(NAV, 'navigate', onNavigate, false);
}

/**
 * Records a navigation stopped while blocking: in the list, and as a `navigation` action forked
 * by `from` (the action that caused it; a child of `parent`), begun in a task of its own once
 * that action's turn is over (`now`: this already is such a task).
 */
function navigationBlocked(kind, url, source, blocked, from, parent, now) {
  const stable = childStable(parent, 'navigation', url);
  if (blockedNavs.length < BLOCKED_CAP) {
    blockedNavs[blockedNavs.length] = {
      url, kind, blocked, stable, cause: parent === ROOT ? '' : parent.stable,
    };
  }
  navsToBegin[navsToBegin.length] = () => {
    begin({
      hid: 0, type: 0, kind: 'navigation', stable, label: REC ? 'navigate ' + url : '', from,
      delay: undefined, joins: null, url, seq: nTaskSeq++, parent,
    });
    // The link's default action goes to the URL its `href` holds when it is followed.
    if (REC && source !== null) readEntry(objEntry(source, 'href'));
  };
  if (now) beginNavigations();
  else rApply(nSetTimeout, G, [beginNavigations, 0]);
}

/** Begins the actions of the navigations recorded so far (a flush calls it too). */
function beginNavigations() {
  while (navsToBegin.length > 0) {
    const go = navsToBegin[0];
    for (let i = 1; i < navsToBegin.length; i++) navsToBegin[i - 1] = navsToBegin[i];
    navsToBegin.length--;
    go();
  }
}

/** Our `navigate` listener, after the page's: what nobody intercepted or cancelled is stopped. */
function onNavigate(ev) {
  if (!blockingNav) return;
  try {
    if (evDefaultPrevented(ev) || wsHas(intercepted, ev)) return;
    if (navHashChange !== null && navHashChange(ev)) return; // stays in the document
    if (navDownload !== null && navDownload(ev) !== null) return;
    const dest = navDest === null ? null : navDest(ev);
    const url = dest !== null && destUrl !== null ? destUrl(dest) : '';
    let src = navSource === null ? null : navSource(ev);
    if (src !== null && !(linkHref !== null && isLink(src))) src = null;
    const cancel = navCancelable(ev);
    if (cancel) evPreventDefault(ev);
    const kind = src !== null ? 'link' : (navType !== null && navType(ev) === 'traverse' ? 'history' : 'script');
    ensure();
    navigationBlocked(kind, NativeString(url), src, cancel, cur, parentInfo(), false);
  } catch (_) {
    // a navigation we cannot read: left to the browser (and to a DevTools guard)
  }
}

function isLink(el) {
  return isNode(el) && nodeType(el) === 1 && (elLocalName(el) === 'a' || elLocalName(el) === 'area');
}

/** Whether a link or form `target` names a new window rather than this one or a frame of it. */
function opensWindow(target) {
  if (!target) return false;
  const t = strToLower(target);
  if (t === '_self' || t === '_parent' || t === '_top') return false;
  if (t === '_blank') return true;
  try {
    const frames = docQSA(DOCUMENT, 'iframe[name], frame[name]');
    for (let i = 0; i < nlLength(frames); i++) {
      if (elGetAttr(nlItem(frames, i), 'name') === target) return false;
    }
  } catch (_) {
    return true;
  }
  return true;
}

/**
 * A click or a submit is about to open another window (a link or form aimed at `_blank`):
 * cancelled now, before its default action runs, and recorded after the dispatch unless a page
 * listener cancelled it too (then the page meant to stay anyway).
 */
function popupDispatch(ev, type, target) {
  if (!blockingNav || evDefaultPrevented(ev) || !isNode(target) || nodeType(target) !== 1) return;
  let url = '';
  let source = null;
  try {
    if (type === 'click') {
      const link = elClosest(target, 'a[href], area[href]');
      if (link === null || !opensWindow(elGetAttr(link, 'target'))) return;
      if (reExec(JS_URL_RE, elGetAttr(link, 'href') || '') !== null) return; // runs here
      url = elLocalName(link) === 'area' ? areaHref(link) : linkHref(link);
      source = link;
    } else if (type === 'submit' && NForm !== null && inherits(target, NForm)) {
      if (!opensWindow(elGetAttr(target, 'target'))) return;
      url = formAction(target);
    } else {
      return;
    }
  } catch (_) {
    return;
  }
  evPreventDefault(ev);
  ensure();
  const from = cur;
  const parent = parentInfo();
  rApply(nSetTimeout, G, [() => {
    if (!wsHas(pagePrevented, ev)) navigationBlocked('popup', NativeString(url), source, true, from, parent, true);
  }, 0]);
}

function installNavigation() {
  if (!W || NAV === null) return;
  nAddEL(NAV, 'navigate', onNavigate, false);
  if (NavEvP) {
    for (const n of ['intercept', 'transitionWhile']) {
      const f = NavEvP[n];
      if (typeof f !== 'function') continue;
      patch(NavEvP, n, function () {
        wsAdd(intercepted, this);
        return rApply(f, this, arguments);
      });
    }
  }
  const nPrevent = EP.preventDefault;
  patch(EP, 'preventDefault', function () {
    if (blockingNav) wsAdd(pagePrevented, this);
    return rApply(nPrevent, this, arguments);
  });
  if (nOpen !== null) {
    patch(W, 'open', function (url) {
      if (!blockingNav) return rApply(nOpen, this, arguments);
      let u = '';
      try {
        u = url === undefined || url === '' ? 'about:blank' : NativeString(new NURL(NativeString(url), pageHref()));
      } catch (_) {
        u = NativeString(url);
      }
      ensure();
      navigationBlocked('popup', u, null, true, cur, parentInfo(), false);
      return null; // as a popup blocker answers
    });
  }
}
