// Assumes the panel is already parsed: an async script may run before it is.
var badgeTried = true;
document.getElementById('panel').textContent = 'Welcome back';
