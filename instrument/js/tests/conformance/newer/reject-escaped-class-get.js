// an escaped get in a class
class C { g\u0065t x() {} }
