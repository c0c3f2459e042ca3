var likeLocal, lazy;
function f() {
  likeLocal = 5;
  if (!lazy) {
    lazy = 9 + likeLocal;
  }
  document.getElementById('likes').textContent = String(lazy);
}
document.getElementById('b1')
    .addEventListener('click', f);
