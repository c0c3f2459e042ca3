document.getElementById('g1').addEventListener('click', function () { loadThumbs('g1'); }, false);
document.getElementById('g2').addEventListener('click', function () { loadThumbs('g2'); }, false);
window.initDone = true;
