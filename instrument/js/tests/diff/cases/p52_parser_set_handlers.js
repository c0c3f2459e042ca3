// kind: handler
// Pitfall 52 (parse-time registration) is the controller's; JS side: handler bodies are
// instrumented and their own locals are not logged.
// expect-not: w Scope[*].local
var local = 1;
local++;
return local;
