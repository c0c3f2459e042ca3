// Registers the gallery buttons; a click before this line runs is lost.
document.getElementById('g1').addEventListener('click', function () { loadThumbs('g1'); });
document.getElementById('g2').addEventListener('click', function () { loadThumbs('g2'); });
