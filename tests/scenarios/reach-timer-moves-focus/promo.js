// Draws attention to the promo code field a moment after the page loads: whatever the user
// is typing in meanwhile, the next keys go into the promo field.
setTimeout(function () {
  document.getElementById('promo').focus();
}, 1500);
