// The widget initialises when its script arrives: it resets the field to its default.
var field = document.getElementById('name');
field.value = '';
field.placeholder = 'your name';
