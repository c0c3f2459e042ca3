// Reports which view was committed, if the scheduler already ran.
var reportedView = committed || 'unknown';
