// Applies the theme chosen at start-up, or the default.
document.documentElement.className = theme || 'light';
