importScripts('wlib.js');
var count = 0;
self.onmessage = function (e) {
  count = count + 1;
  postMessage(label(e.data) + ':' + count);
};
