log.push('vendor');
var px = new Image();
px.src = 'pixel.svg';
var vx = new XMLHttpRequest();
vx.open('GET', 'config.json');
vx.onload = function () { log.push('config'); };
vx.send();
