// Pitfall 29: scripts are not wrapped or moved (document.currentScript itself is checked by
// the Chromium tests of instrument/); here: the stack shows code runs at top level.
function where() { return new Error().stack.split("\n").length > 1; }
console.log(where(), typeof this);
