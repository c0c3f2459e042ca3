// An action that logs more than one upload's worth of records keeps them as flat pieces while
// it runs (trace.js, `spill`), not as one growing rope, and still uploads them as one batch
// when it ends. Loads the real runtime (record mode, argv[2]) into a fresh `vm` context, runs
// one timer action that reads 3 000 fields of objects the action before made, and prints the runtime's buffer statistics
// taken inside the action, the upload bodies' sizes and their records as JSON
// (tests/long_action.rs checks them).
'use strict';
const vm = require('vm');
const { loadRuntime, records } = require('./runtime_vm.js');

const { ctx, g, bodies } = loadRuntime(process.argv[2]);
g.__done = (inside) => {
  // Every upload is sent by then: the fake fetch answers at once, and each answer sends the
  // next batch.
  setTimeout(() => {
    // Synchronously: the output is larger than a pipe holds, and the process exits next.
    require('fs').writeSync(1, JSON.stringify({
      inside,
      sizes: bodies.map((b) => b.length),
      records: records(bodies),
    }));
    process.exit(0);
  }, 50);
};

vm.runInContext(`(function () {
  const S = __shepherd;
  const P = 34359738368 + 524288 + 1; // a position: key 1, line 1, column 1
  // Made and touched by one action, read by the next: their fields are logged as the next
  // action reads them (the fields of an object one action alone touches are not).
  const todos = [];
  setTimeout(() => {
    for (let i = 0; i < 1000; i++) {
      const o = { title: 'todo ' + i, completed: false, id: i };
      S.W(o, 'seen', (o.seen = true), P);
      todos.push(o);
    }
  }, 0);
  setTimeout(() => {
    for (let i = 0; i < 1000; i++) {
      const o = todos[i];
      S.r(o, 'title', P);
      S.r(o, 'completed', P);
      S.r(o, 'id', P);
    }
    const st = S.control('s').stats();
    const inside = { pieces: st.bufferPieces, chars: st.bufferChars };
    setTimeout(() => {
      S.control('s').flush();
      __done(inside);
    }, 0);
  }, 0);
})()`, ctx);
