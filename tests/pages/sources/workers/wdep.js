export var base = 21;
