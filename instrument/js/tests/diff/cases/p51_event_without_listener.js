// Pitfall 51 (READ of a listener list before dispatch) is the controller's; JS side:
// assigning an on* property is a logged property write.
// expect: w *.onclick
var button = { onclick: null };
button.onclick = function () { return 1; };
console.log(typeof button.onclick);
