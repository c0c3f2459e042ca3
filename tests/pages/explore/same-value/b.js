window.theme = 'dark';
