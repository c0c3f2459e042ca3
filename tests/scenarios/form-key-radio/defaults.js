// Sets every radio of the group from the default, as form libraries do.
var radios = document.querySelectorAll('input[name=ship]');
for (var i = 0; i < radios.length; i++) {
  radios[i].checked = radios[i].value === 'standard';
}
