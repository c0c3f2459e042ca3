// The handlers call loadThumbs, which gallery.js declares later.
document.getElementById('g1').addEventListener('click', function () { loadThumbs('g1'); });
document.getElementById('g2').addEventListener('click', function () { loadThumbs('g2'); });
