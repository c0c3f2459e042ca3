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
  xhr.open('GET', name + '.json', true);
  xhr.send(null);
}
function showThumbs(name) {
  var container = document.getElementById('container');
  container.textContent = '';
  for (var pos = 0; pos < thumbs.length; ++pos) {
    var b = document.createElement('button');
    b.textContent = 'Delete ' + thumbs[pos].title;
    container.appendChild(b);
  }
}
