// an escaped static before a block
class C { st\u0061tic {} }
