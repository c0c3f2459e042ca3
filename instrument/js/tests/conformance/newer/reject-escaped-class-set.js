// an escaped set in a class
class C { s\u0065t x(v) {} }
