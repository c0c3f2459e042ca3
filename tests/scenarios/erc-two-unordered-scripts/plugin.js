// Needs Lib: works only when lib.js happened to run first.
document.getElementById('price').textContent = Lib.format(12);
