// instrument: error
// Pitfall 45: a syntax error is not instrumented (the original bytes are served).
var = ;
