// boot.js — installs every wrapper (each independently: one failing API never disables the
// others), the exit flushes, and the `__shepherd` global. Runs last, after access.js.

let exitArmed = false;

/** Called when pagehide/unload begins: make sure what the page's handlers do is uploaded too. */
function exitSoon() {
  // From now on every page listener is followed by a flush: any of them may be the last.
  exitArmed = true;
}

function onPageHide(ev) {
  exitSoon();
  // Listeners registered after ours still run; they are sent by finalFlush at unload.
  const persisted = ev && ev.persisted === true;
  flushAtExit();
  if (!persisted) pageGone = true;
}

function onPageShow() {
  pageGone = false;
  exitArmed = false;
}

function safeInstall(f) {
  try {
    f();
  } catch (e) {
    // Keep the page working; the failure shows up in the trace as an exception of the controller.
    bootErrors[bootErrors.length] = NativeString(e && e.message);
  }
}

const bootErrors = [];
safeInstall(installToString);
safeInstall(installRepair);
safeInstall(installDeterminism);
safeInstall(installTimers);
safeInstall(installListeners);
safeInstall(installCauses);
safeInstall(installFocus);
safeInstall(installNavigation);
safeInstall(installHandlerProps);
safeInstall(installRoot);
safeInstall(installPostMessage);
safeInstall(installXhr);
safeInstall(installFetch);
safeInstall(installServiceWorkerRegister);
safeInstall(installPorts);
safeInstall(installWebSocket);
safeInstall(installObservers);
safeInstall(installPromises);
safeInstall(installStorage);
safeInstall(installWorkers);
safeInstall(installDynamicFunctions);
safeInstall(installDom);
safeInstall(installContextualFragment);
safeInstall(startObserver);
if (W) {
  nAddEL(W, 'pagehide', onPageHide, false);
  nAddEL(W, 'pageshow', onPageShow, false);
  if (DOCUMENT) {
    nAddEL(DOCUMENT, 'visibilitychange', () => {
      if (DOCUMENT.visibilityState === 'hidden') maybeFlush(true);
    }, false);
  }
}
if (REC && bootErrors.length > 0) {
  ensure();
  for (let i = 0; i < bootErrors.length; i++) exception('shepherd runtime: ' + bootErrors[i], '');
  end();
}
// The explorer's page from its first callback on: only the top-level document of its own
// window (frames and windows the page opens are not driven by the explorer, and held
// callbacks there would wait for ever).
if (CONFIG.explorer === true && W && W.top === W && W.opener === null) {
  safeInstall(() => control.explorerMode());
}
defProp(G, '__shepherd', { value: api, enumerable: false, writable: false, configurable: false });
// A dedicated worker's script runs right after this: its action begins now (workers.js).
safeInstall(installWorkerSide);
