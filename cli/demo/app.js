// Loaded async: it may run before or after the user has typed a coupon.
(function () {
  var coupon = document.getElementById('coupon');
  coupon.value = 'WELCOME';

  var stock = document.getElementById('stock');
  function load(url) {
    var xhr = new XMLHttpRequest();
    xhr.open('GET', url);
    xhr.onload = function () { stock.textContent = xhr.responseText; };
    xhr.send();
  }
  document.getElementById('refresh').addEventListener('click', function () {
    // Two requests, applied in whichever order they arrive: the slower, older answer can win.
    load('stock.txt?v=old&delay=300');
    load('stock.txt?v=new&delay=50');
  });
  load('stock.txt?v=initial&delay=100');
})();
