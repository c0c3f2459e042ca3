window.lib = {
  ready: function (f) {
    if (document.readyState !== 'loading') setTimeout(f, 0);
    else document.addEventListener('DOMContentLoaded', f);
  },
  jsonp: function (url, f) {
    var name = 'cb' + Math.floor(Math.random() * 1e6);
    var s = document.createElement('script');
    window[name] = function (d) { delete window[name]; s.parentNode.removeChild(s); f(d); };
    s.src = url + '?callback=' + name;
    document.head.appendChild(s);
  },
  getScript: function (url, f) {
    var x = new XMLHttpRequest();
    x.open('GET', url);
    x.onload = function () { (0, eval)(x.responseText); f(); };
    x.send();
  },
};
log.push('lib');
