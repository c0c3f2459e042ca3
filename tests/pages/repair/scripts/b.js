s_att.events.push('b');
document.getElementById('status').textContent = 'ok ' + s_att.events.join(',') + ' ' + document.currentScript.getAttribute('src');
