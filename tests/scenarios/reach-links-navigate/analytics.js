// Click tracking for the partner links, and the shop link's campaign code.
var clicks = [];
function track(name) {
  clicks.push(name);
}
document.getElementById('shop').href = 'https://shop.example/store?campaign=partners';
