import { a } from './a.js';
log.push('b' + a);
