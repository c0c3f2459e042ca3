// Checks the default option, which unchecks the one the user picked.
document.getElementById('standard').checked = true;
