// an escaped static
class C { st\u0061tic m() {} }
