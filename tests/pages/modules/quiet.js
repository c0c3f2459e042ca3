// Calls no wrapped API and touches no shared state: only its registration says it ran.
(function () {
  var local = 1;
  local += 1;
})();
