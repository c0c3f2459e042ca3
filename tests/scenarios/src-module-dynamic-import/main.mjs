import { routes } from './routes.mjs';

window.router = { routes: routes, current: 'home' };
window.base = '/shop';
// Loaded on demand; it reads base, which this module wrote before asking for it.
import('./extra.mjs').then(function (m) { m.install(); });
