// Assumes the panel is already parsed: an async script may run before it is.
document.getElementById('panel').textContent = 'Welcome back';
