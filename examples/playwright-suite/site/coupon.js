function applyCoupon() {
  var code = document.getElementById('code').value;
  var rate = code === 'SAVE10' ? discount : 0;
  document.getElementById('total').textContent = (100 * (1 - rate)).toFixed(2);
}
window.couponReady = true;
