// Late initialisation: the defaults arrive after the user may have chosen.
document.getElementById('small').checked = true;
document.getElementById('color').selectedIndex = 2;
window.inited = true;
