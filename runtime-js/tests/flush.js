// The explorer waits for the trace at the end of every execution: `flush()` must settle when
// the upload holding its last batch is answered, not at a later timer tick. The runtime runs
// with timers that never fire, so only the delivery can settle it. Prints, as JSON, whether
// each flush settled before the event loop's next turn and how many uploads were made.
'use strict';
const vm = require('vm');
const { loadRuntime } = require('./runtime_vm.js');

const never = () => 0;
const { ctx, bodies } = loadRuntime(process.argv[2], { setTimeout: never, setInterval: never });

const settled = [];
const flush = (label) => {
  const p = vm.runInContext(`__shepherd.w('x', 1, 34359738368 + 524288 + 1);
    __shepherd.control('s').flush()`, ctx);
  p.then(() => settled.push(label));
};
flush('first');
setImmediate(() => {
  flush('second');
  setImmediate(() => {
    // Nothing new since the last flush but its end of the action: settles as well.
    vm.runInContext(`__shepherd.control('s').flush()`, ctx).then(() => settled.push('empty'));
    setImmediate(() => {
      process.stdout.write(JSON.stringify({ settled, uploads: bodies.length }));
      process.exit(0);
    });
  });
});
