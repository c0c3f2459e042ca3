window.ran = ['b1'];
window.img = new Image();
window.img.onload = function () { window.ran.push('img'); };
window.img.src = 'pic.svg';
