// Answers price.json itself (an offline price list); everything else goes to the network.
self.addEventListener('install', function () { self.skipWaiting(); });
self.addEventListener('activate', function (e) { e.waitUntil(self.clients.claim()); });
self.addEventListener('fetch', function (e) {
  if (new URL(e.request.url).pathname.endsWith('/price.json')) {
    e.respondWith(new Response(JSON.stringify({ price: 42 }), {
      headers: { 'content-type': 'application/json' }
    }));
  }
});
