window.ran = ['s1'];
// Inserted scripts are low-priority requests; they delay the window's load event until they
// have run.
for (var i = 1; i <= 4; i++) {
  var s = document.createElement('script');
  s.src = 'i' + i + '.js';
  document.head.appendChild(s);
}
var xhr = new XMLHttpRequest();
xhr.open('GET', 'data.json');
xhr.onload = function () { window.ran.push('data'); };
xhr.send();
