// Declares the gallery functions the buttons call.
var thumbs;
function loadThumbs(name) {
  thumbs = [];
  var xhr = new XMLHttpRequest();
  xhr.onload = function () {
    thumbs = JSON.parse(xhr.responseText);
    document.getElementById('container').textContent = thumbs.length + ' pictures';
  };
  xhr.open('GET', name + '.json', true);
  xhr.send(null);
}
