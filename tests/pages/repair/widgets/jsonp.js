// A JSONP answer: the server would name the callback; a static file reads it from its URL.
(function () {
  var m = /[?&]callback=(\w+)/.exec(document.currentScript.src);
  window[m[1]]('data');
})();
