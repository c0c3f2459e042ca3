// The page's code, deferred: runs once the document is parsed, and assumes tracker.js ran.
var appTried = true;
document.getElementById('status').textContent = Tracker.page('home');
