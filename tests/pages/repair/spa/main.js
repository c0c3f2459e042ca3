import { items } from './store.js';
log.push('main:' + items.length);
import('./lazy.js').then(function (m) { log.push(m.name); });
fetch('items.json').then(function (r) { return r.json(); }).then(function () { log.push('items'); });
