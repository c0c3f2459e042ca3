window.ran = ['s1'];
var xhr = new XMLHttpRequest();
xhr.open('GET', 'data.json');
xhr.onload = function () { window.ran.push('data'); };
xhr.send();
