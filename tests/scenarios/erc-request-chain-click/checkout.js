// The cart is requested while the page loads; its answer asks for the shipping rates of
// the cart's country. Pay needs both.
var cart = null;
var rates = null;

function get(url, done) {
  var xhr = new XMLHttpRequest();
  xhr.open('GET', url);
  xhr.onload = function () { done(JSON.parse(xhr.responseText)); };
  xhr.send();
}

get('cart.json', function (c) {
  cart = c;
  document.getElementById('cart').textContent = c.items + ' items, ' + c.subtotal + ' EUR';
  get('rates.json?country=' + c.country, function (r) { rates = r; });
});

document.addEventListener('DOMContentLoaded', function () {
  document.getElementById('pay').addEventListener('click', function () {
    var total = cart.subtotal + rates.shipping;
    document.getElementById('total').textContent = 'Paid ' + total + ' EUR';
  });
});
