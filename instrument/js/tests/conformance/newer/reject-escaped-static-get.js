// an escaped get after static
class C { static g\u0065t m() {} }
