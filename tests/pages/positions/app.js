// An external script reading the inline script's global.
var label = 'app';
window.fromApp = counter;
