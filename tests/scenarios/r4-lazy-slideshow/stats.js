// An external statistics script, deferred until the document is parsed.
var pageViews = (pageViews || 0) + 1;
