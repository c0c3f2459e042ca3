import { base } from './wdep.js';
var answer = base * 2;
postMessage(answer);
