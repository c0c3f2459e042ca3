// Pre-fills the most common choices, whatever the user already chose.
document.getElementById('country').value = 'DE';
document.getElementById('speed').value = 'express';
document.getElementById('qty').value = '1';
