// lookfirst device page: service worker. It keeps the page's own files so that the page opens (and
// says it cannot reach the gate) without a network; it never answers an API request from a cache: a
// card list or a decision always comes from the gate, never from a stored copy.
const SHELL = 'lookfirst-device-v2';
const FILES = ['/device/', '/device/app.js', '/device/voice.js', '/device/app.css', '/device/manifest.webmanifest', '/device/icon.svg'];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(SHELL)
      .then((c) => c.addAll(FILES))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  // API requests, other origins and anything but GET go to the network untouched (no respondWith).
  if (url.origin !== self.location.origin || event.request.method !== 'GET' || url.pathname.startsWith('/device/api/')) return;
  if (!FILES.includes(url.pathname)) return;
  // Network first, so an updated gate serves its updated page; the cached shell only when offline.
  event.respondWith(
    fetch(event.request)
      .then((res) => {
        if (res.ok) {
          const copy = res.clone();
          void caches.open(SHELL).then((c) => c.put(url.pathname, copy));
        }
        return res;
      })
      .catch(() => caches.match(url.pathname).then((hit) => hit || Response.error())),
  );
});
