// Pitfall 32: SVG script text arrives entity-decoded; the decoded code runs the same.
function g() { console.log("lt"); }
if (1 < 2) g();
