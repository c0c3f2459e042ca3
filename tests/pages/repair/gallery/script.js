// EventRaceCommander's Fig. 1 (script.js), with a status line the tests read.
var thumbs;
function loadThumbs(name) {
  thumbs = [];
  var xhr = new XMLHttpRequest();
  xhr.onreadystatechange = function () {
    if (xhr.readyState === XMLHttpRequest.DONE) {
      thumbs = JSON.parse(xhr.responseText);
      showThumbs(name);
    }
  };
  xhr.open('GET', name + '.json?delay=' + (name === 'g2' ? (window.G2_DELAY || 0) : 0), true);
  xhr.send(null);
}
function showThumbs(name) {
  var c = document.getElementById('container');
  c.innerHTML = '';
  for (var pos = 0; pos < thumbs.length; ++pos) {
    var b = document.createElement('button');
    b.textContent = 'Delete';
    b.className = 'del';
    (function (pos) {
      b.addEventListener('click', function () { deleteImg(name, pos); }, false);
    })(pos);
    c.appendChild(b);
  }
  document.getElementById('status').textContent = 'showing ' + name;
}
function deleteImg(name, pos) {
  var xhr = new XMLHttpRequest();
  xhr.open('POST', 'delete?name=' + name + '&img=' + thumbs[pos].id, true);
  xhr.send(null);
  document.getElementById('status').textContent = 'deleted ' + name + '/' + thumbs[pos].id;
}
