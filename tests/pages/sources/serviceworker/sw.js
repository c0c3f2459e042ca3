importScripts('swlib.js');
self.addEventListener('install', function () { self.skipWaiting(); });
self.addEventListener('activate', function (e) { e.waitUntil(self.clients.claim()); });
self.addEventListener('fetch', function (e) {
  if (e.request.url.indexOf('virtual.json') >= 0) {
    e.respondWith(new Response(JSON.stringify({ from: answerFrom() }), {
      headers: { 'content-type': 'application/json' },
    }));
  }
});
