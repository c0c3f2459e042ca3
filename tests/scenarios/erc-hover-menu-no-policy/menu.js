// Unfolds the menu while the pointer is over it.
var menu = document.getElementById('menu');
menu.addEventListener('mouseover', function () { menu.classList.add('open'); });
menu.addEventListener('mouseleave', function () { menu.classList.remove('open'); });
