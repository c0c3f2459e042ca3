// kind: jsurl
// Pitfall 41: a JSON body parsed as a script keeps its value (the proxy does not instrument
// JSON at all; this checks the pass would not change it either).
[1, 2, { "a": "b" }]
