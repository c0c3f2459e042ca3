// Late initialisation done right: the default goes only into an empty field.
var field = document.getElementById('name');
if (!field.value) field.value = 'Guest';
