// Pitfall 1: typeof of an undeclared global stays "undefined".
// expect: r Global.notDeclared
console.log(typeof notDeclared === "undefined", typeof notDeclared);
try { notDeclared2; } catch (e) { console.log(e.name); }
// expect: r Global.notDeclared2
