import { dep } from './dep.js';
order.push('main:' + dep);
// Evaluated in a task of its own, after every deferred module ran.
import('./dyn.js?delay=200');
