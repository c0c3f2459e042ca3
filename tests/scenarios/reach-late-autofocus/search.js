// The search box arrives with the search script and asks for the focus.
var box = document.createElement('div');
box.innerHTML = '<label>Search the notes <input id="q" type="search" autofocus></label>';
document.getElementById('top').appendChild(box);
