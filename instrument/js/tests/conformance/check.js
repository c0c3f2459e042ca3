// Conformance checker for tests/conformance.rs: compiles (never runs) every plain and every
// instrumented program of a manifest in this one node process and prints, per program, whether
// V8 accepted it.
//
// usage: node --experimental-vm-modules check.js MANIFEST_JSON
// manifest: [{name, module, plain, instrumented}] (instrumented: null when the pass refused)
// output:   [{name, plain, instr, strictPlain, strictInstr}]: null (compiled) or the
//           SyntaxError message; instr is null when there was nothing to compile, the strict
//           verdicts are there for instrumented scripts only
'use strict';
const vm = require('vm');
const fs = require('fs');

const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

/** null when V8 compiles `code` as a script or module, else the error message. */
function compile(code, module) {
  try {
    if (module) new vm.SourceTextModule(code, { identifier: 'file:///case.mjs' });
    else new vm.Script(code, { filename: 'case.js' });
    return null;
  } catch (e) {
    return String(e && e.message);
  }
}

// Each script is also compiled as strict code, as eval code from a strict caller is: the
// instrumented text must be rejected there exactly when the original is.
const STRICT = "'use strict';\n";
const out = [];
for (const c of cases) {
  const r = {
    name: c.name,
    plain: compile(c.plain, c.module),
    instr: c.instrumented === null ? null : compile(c.instrumented, c.module),
  };
  if (!c.module && c.instrumented !== null) {
    r.strictPlain = compile(STRICT + c.plain, false);
    r.strictInstr = compile(STRICT + c.instrumented, false);
  }
  out.push(r);
}
process.stdout.write(JSON.stringify(out));
