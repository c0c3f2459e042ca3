import { dep } from './dep.js';
order.push('main:' + dep);
