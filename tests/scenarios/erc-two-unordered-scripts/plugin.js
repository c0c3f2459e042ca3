// Needs Lib: works only when lib.js happened to run first.
var pluginTried = true;
document.getElementById('price').textContent = Lib.format(12);
