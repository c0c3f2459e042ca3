window.seen = [];
document.getElementById('field').addEventListener('input', function (e) { window.seen.push(e.inputType + ':' + e.data); });
document.getElementById('field').addEventListener('keydown', function (e) { window.seen.push('keydown:' + e.key); });
document.getElementById('field').addEventListener('keyup', function (e) { window.seen.push('keyup:' + e.key); });
document.getElementById('box').addEventListener('change', function (e) { window.seen.push('change:' + e.target.checked); });
document.getElementById('go').addEventListener('click', function () { window.seen.push('click:go'); });
window.lateDone = true;
