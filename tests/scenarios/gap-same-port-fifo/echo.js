// Answers every message with the same data.
onmessage = function (e) { postMessage(e.data); };
