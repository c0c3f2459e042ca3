document.getElementById('frame').addEventListener('load', function () {
  document.getElementById('status').textContent = 'adjusted';
});
