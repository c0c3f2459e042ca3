// The real runtime (record mode), loaded into a fresh `vm` context with the few browser globals
// it needs; what it uploads is kept. Shared by the node scripts of these tests.
'use strict';
const fs = require('fs');
const vm = require('vm');

/**
 * Loads the rendered runtime at `path`: returns the context and the bodies of the runtime's
 * trace uploads (its `fetch` calls), in order. `globals` replaces browser globals the runtime
 * takes when it loads (a timer that never fires).
 */
function loadRuntime(path, globals = {}) {
  const ctx = vm.createContext({});
  const g = vm.runInContext('globalThis', ctx);
  for (const k of ['Event', 'EventTarget', 'MessageEvent', 'ErrorEvent', 'MessageChannel', 'MessagePort',
    'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'performance', 'crypto']) {
    g[k] = globalThis[k];
  }
  Object.assign(g, globals);
  const bodies = [];
  g.fetch = (url, init) => {
    bodies.push(String(init.body));
    return Promise.resolve({ ok: true, status: 200 });
  };
  vm.runInContext(fs.readFileSync(path, 'utf8'), ctx, { filename: 'runtime.js' });
  return { ctx, g, bodies };
}

/** The records (JSON arrays) of trace upload bodies, in order; header lines left out. */
function records(bodies) {
  const out = [];
  for (const b of bodies) for (const line of b.split('\n')) if (line.startsWith('[')) out.push(JSON.parse(line));
  return out;
}

module.exports = { loadRuntime, records };
