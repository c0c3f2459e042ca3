// Pitfall 53 (arc direction) is the controller's; JS side: timers are plain calls with the
// callback unchanged.
// expect: w Global.fired
var fired = 0;
setTimeout(function () { fired = 1; console.log("fired", fired); }, 0);
