log.push('tags');
['tag-a.js', 'tag-b.js?delay=20'].forEach(function (src) {
  var s = document.createElement('script');
  s.async = true;
  s.src = src;
  document.head.appendChild(s);
});
