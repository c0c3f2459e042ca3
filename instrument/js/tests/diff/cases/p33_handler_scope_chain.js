// kind: handler
// Pitfall 33: free identifiers of handlers resolve through the form/element scope, and calls
// through that scope keep it as this (the harness runs handlers inside `with (form)`).
q.value = "x";
submit();
