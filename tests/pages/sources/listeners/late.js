// Attached late: a click before this runs finds no handler.
function go() {
  window.went = true;
}
document.getElementById('b').addEventListener('click', go);
var c = document.getElementById('c');
c.onclick = go;
