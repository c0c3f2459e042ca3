// Loads the signed-in user's profile; the page renders it further down.
var profile = null;
(function () {
  var xhr = new XMLHttpRequest();
  xhr.open('GET', 'me.json');
  xhr.onload = function () {
    profile = JSON.parse(xhr.responseText);
  };
  xhr.send();
})();
