// A newsletter box, inserted when its script arrives, asks for the focus. The browser gives
// it only while nothing else has the focus.
var box = document.createElement('form');
box.id = 'news';
box.innerHTML = '<label>Newsletter <input id="news-email" type="email" autofocus></label>';
document.getElementById('news-slot').appendChild(box);
