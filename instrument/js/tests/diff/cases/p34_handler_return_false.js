// kind: handler
// Pitfall 34: `return` at handler top level is allowed and its value kept.
if (event.type === "click") return false;
return true;
