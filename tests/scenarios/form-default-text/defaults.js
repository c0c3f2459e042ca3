// Late initialisation: writes the placeholder text into the field as its value.
document.getElementById('name').value = 'Your name';
