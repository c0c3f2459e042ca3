// The theme code comes as text (a CMS snippet) and is evaluated at the top level.
var snippet = "function applyTheme(name) { document.body.className = 'theme-' + name; }";
eval(snippet);
