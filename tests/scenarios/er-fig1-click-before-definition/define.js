// Defines the button's function and the flag that says whether the price is known yet.
function f() {
  var out = document.getElementById('out');
  if (init)
    out.textContent = 'price ' + y.g;
  else
    out.textContent = 'not ready';
}
var init = false, y = null;
