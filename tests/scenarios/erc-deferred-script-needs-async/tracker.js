// The analytics library: loaded async, so it may run before or after the page's own code.
var Tracker = {
  page: function (name) { return 'tracked ' + name; }
};
