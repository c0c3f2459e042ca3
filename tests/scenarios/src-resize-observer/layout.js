// Picks the menu style from the observed width, or the wide one before the first callback.
var menuStyle = compact ? 'drawer' : 'bar';
