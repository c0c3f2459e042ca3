// Sums what the page sends and answers with the total.
var calls = 0;
onmessage = function (e) {
  calls++;
  var sum = 0;
  for (var i = 0; i < e.data.length; i++) sum += e.data[i];
  postMessage(sum);
};
