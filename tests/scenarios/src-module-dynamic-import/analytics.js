// Async: runs whenever it arrives, maybe before the module graph.
var pageRoute = window.router ? window.router.current : 'unknown';
