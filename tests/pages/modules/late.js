import { dep } from './dep.js';
order.push('late:' + dep);
