// A small library the plugin builds on.
var Lib = {
  format: function (n) { return n.toFixed(2) + ' kr'; }
};
