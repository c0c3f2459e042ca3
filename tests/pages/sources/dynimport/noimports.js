// A module without import or export: the proxy instruments it as a classic script.
window.noImportsRan = true;
