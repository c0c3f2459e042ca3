// Wires the buy button.
// (A few lines of set-up come first, so the script's first line
// is not where the listener is added.)
var button = document.getElementById('buy');
button.addEventListener('click', function () {
  document.getElementById('state').textContent = 'bought';
});
