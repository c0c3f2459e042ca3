// Pre-selects the most common size, whatever the user already chose.
document.getElementById('size').value = 'M';
