// counts clicks
var count = 0;
setTimeout(function () {
  count = count + 1;
}, 10);
