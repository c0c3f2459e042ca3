import { dep } from './dep.js';
order.push('main:' + dep);
// Evaluated in a task of its own, after every deferred module ran, and well after late.js
// (delay 300): a dynamic import evaluated while an async module still waits is named after that
// module (the controller guesses a run's element until its registration names it exactly).
import('./dyn.js?delay=1200');
