// Differential test harness: runs each case plain and instrumented in fresh `vm` contexts and
// prints what each run observed (console output, uncaught error, access log) as JSON.
//
// usage: node --experimental-vm-modules harness.js ACCESS_JS MANIFEST_JSON
// manifest: [{name, module, plain, instrumented, dynamic}] (code strings; dynamic maps
// `kind:source` of dynamic code to its instrumented text or null)
'use strict';
const vm = require('vm');
const fs = require('fs');
const util = require('util');

// In the real bundle access.js runs after prelude.js, which needs browser globals; these are
// the prelude bindings access.js uses, over a document at a fixed URL without currentScript.
const PRELUDE = [
  'const uncurry = (f) => Reflect.apply(Function.prototype.bind, Function.prototype.call, [f]);',
  "const pageHref = () => 'https://diff.test/page.html#frag';",
  'const strIndexOf = uncurry(String.prototype.indexOf);',
  'const strSlice = uncurry(String.prototype.slice);',
  'const strCharCode = uncurry(String.prototype.charCodeAt);',
  'const DOCUMENT = null;',
  'const docCurrentScript = null;',
  'const scriptSrc = null;',
  'const FP = Function.prototype;',
  'const rConstruct = Reflect.construct;',
  'const proxies = new WeakSet();',
  'let proxyCount = 0;',
  'const wsAdd = uncurry(WeakSet.prototype.add);',
  'const markNative = () => {};',
  'const patch = (o, n, f) => Object.defineProperty(o, n, { value: f, writable: true, enumerable: false, configurable: true });',
].join('\n');
const accessSrc = PRELUDE + '\n' + fs.readFileSync(process.argv[2], 'utf8');
const cases = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));

function fmt(v) {
  return typeof v === 'string' ? v : util.inspect(v, { depth: 4 });
}

function errText(e) {
  if (e && typeof e === 'object' && 'name' in e && 'message' in e) return e.name + ': ' + e.message;
  return 'thrown: ' + fmt(e);
}

async function runOne(c, instrumented) {
  const out = [];
  const log = [];
  const missing = [];
  let error = null;
  const ctx = vm.createContext({});
  const cg = vm.runInContext('globalThis', ctx);
  const pending = [];
  cg.console = { log: (...a) => out.push(a.map(fmt).join(' ')) };
  cg.setTimeout = (f, ms) => {
    const p = new Promise((res) => setTimeout(() => {
      try {
        if (typeof f === 'function') f();
      } catch (e) {
        if (error === null) error = errText(e);
      }
      res();
    }, ms || 0));
    pending.push(p);
    return pending.length;
  };
  if (instrumented) {
    const ids = new WeakMap();
    let next = 0;
    const oid = (o) => {
      let n = ids.get(o);
      if (n === undefined) {
        n = next++;
        ids.set(o, n);
      }
      return n;
    };
    // Every access is logged as `r <loc>` / `w <loc>`, and when it carries a position also as
    // `r <loc> @ <url:line:col>` (T.pos is installed by access.js).
    const T = {
      read(l, v, has, p) {
        log.push('r ' + l);
        if (p !== undefined) log.push('r ' + l + ' @ ' + T.pos(p));
      },
      write(l, v, p) {
        log.push('w ' + l);
        if (p !== undefined) log.push('w ' + l + ' @ ' + T.pos(p));
      },
      // Location entries (controller.js): only the name matters here.
      readEntry(e, v, has, p) {
        T.read(e.l, v, has, p);
      },
      writeEntry(e, v, p) {
        T.write(e.l, v, p);
      },
      ensure() {},
      oid,
      globalEntry(n) {
        return { l: 'Global.' + String(n) };
      },
      scopeEntry(s, n) {
        return { l: 'Scope[' + s + '].' + n };
      },
      locOf(l) {
        return { l };
      },
      objEntry(o, k) {
        if (o === cg) return { l: 'Global.' + String(k) };
        if (Array.isArray(o)) return { l: k === 'length' ? 'Array[' + oid(o) + ']$LEN' : 'Array[' + oid(o) + ']$[' + String(k) + ']' };
        return { l: 'Object[' + oid(o) + '].' + String(k) };
      },
      recording: true,
      api: vm.runInContext('Object.create(null)', ctx),
      await0() { log.push('await'); return 1; },
      await1() { log.push('resume'); },
      // Dynamic code is instrumented by the pass between runs (tests/diff.rs): a source seen
      // for the first time is listed in `missing` and runs plain; the next run gets its
      // instrumented text (or null when the pass refused it) from the manifest.
      instrument(src, kind) {
        log.push('instrument ' + src);
        const key = kind + ':' + src;
        if (Object.prototype.hasOwnProperty.call(c.dynamic, key)) return c.dynamic[key];
        missing.push([kind, src]);
        return null;
      },
    };
    const setup = vm.runInContext('(function (T) {\n' + accessSrc + '\n})', ctx);
    setup(T);
    vm.runInContext("(function (api) { Object.defineProperty(globalThis, '__shepherd', { value: api, enumerable: false, writable: false, configurable: false }); })", ctx)(T.api);
  }
  const codes = instrumented ? c.instrumented : c.plain;
  const unhandled = (e) => { if (error === null) error = errText(e); };
  process.on('unhandledRejection', unhandled);
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i];
    try {
      if (c.module) {
        const dep = new vm.SyntheticModule(['x'], function () { this.setExport('x', 42); }, { context: ctx });
        const m = new vm.SourceTextModule(code, {
          context: ctx,
          identifier: 'file:///case.mjs',
          initializeImportMeta(meta) { meta.url = 'file:///case.mjs'; },
          importModuleDynamically: async () => { if (dep.status === 'unlinked') await dep.link(() => {}); if (dep.status === 'linked') await dep.evaluate(); return dep; },
        });
        await m.link(async () => dep);
        await m.evaluate();
      } else {
        vm.runInContext(code, ctx, { filename: c.name + '-' + i + '.js' });
      }
    } catch (e) {
      // Like a browser: a failing script reports its error, later scripts still run.
      out.push('uncaught ' + errText(e));
    }
  }
  // Let promise jobs and timers settle.
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 5));
    await Promise.all(pending);
  }
  process.off('unhandledRejection', unhandled);
  return { out, error, log, missing };
}

(async () => {
  const results = [];
  for (const c of cases) {
    const plain = await runOne(c, false);
    const instr = await runOne(c, true);
    results.push({ name: c.name, plain, instr });
  }
  process.stdout.write(JSON.stringify(results));
})();
