log.push('widget');
var ws = document.createElement('script');
ws.src = 'widget-part.js';
document.head.appendChild(ws);
