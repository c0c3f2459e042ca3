// Adjusts the frame's height once it has loaded; misses a load that already happened.
document.getElementById('frame').addEventListener('load', function () {
  var frame = document.getElementById('frame');
  frame.style.height = frame.contentDocument.body.scrollHeight + 'px';
  document.getElementById('note').textContent = 'Frame height adjusted';
});
