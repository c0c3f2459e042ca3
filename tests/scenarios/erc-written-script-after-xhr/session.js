// Asks for the visitor's session (the ad loader targets by its segment).
var session = null;
(function () {
  var xhr = new XMLHttpRequest();
  xhr.open('GET', 'session.json');
  xhr.onload = function () { session = JSON.parse(xhr.responseText); };
  xhr.send();
})();
