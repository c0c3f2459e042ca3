import { a } from './a.js';
log.push('c' + a);
