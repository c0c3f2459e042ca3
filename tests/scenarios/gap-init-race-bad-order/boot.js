// Reads the settings: throws when settings.js has not run yet.
document.getElementById('greeting').textContent = settings.greeting;
