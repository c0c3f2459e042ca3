var thumbs = [];
function loadThumbs(name) {
  thumbs = [];
  var xhr = new XMLHttpRequest();
  xhr.onreadystatechange = function () {
    if (xhr.readyState === XMLHttpRequest.DONE) {
      thumbs = JSON.parse(xhr.responseText);
      showThumbs(name);
    }
  };
  xhr.open('GET', name + '.json', true);
  xhr.send(null);
}
function showThumbs(name) {
  var container = document.getElementById('container');
  container.textContent = '';
  for (var pos = 0; pos < thumbs.length; ++pos) {
    var b = document.createElement('button');
    b.className = 'delete';
    b.textContent = 'Delete ' + thumbs[pos].title;
    (function (pos) {
      b.addEventListener('click', function () { deleteImg(name, pos); });
    })(pos);
    container.appendChild(b);
  }
}
function deleteImg(name, pos) {
  // thumbs is empty while another gallery's answer is on its way.
  var id = thumbs[pos].id;
  var xhr = new XMLHttpRequest();
  xhr.open('POST', 'delete.txt?name=' + name + '&img=' + id, true);
  xhr.send(null);
  document.getElementById('status').textContent = 'deleted ' + id;
}
document.getElementById('g1').addEventListener('click', function () { loadThumbs('g1'); });
document.getElementById('g2').addEventListener('click', function () { loadThumbs('g2'); });
