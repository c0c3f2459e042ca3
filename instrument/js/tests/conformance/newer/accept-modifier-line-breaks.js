// line breaks after get, set, static and async *
({ get
 x() { return 1 }, set
 x(v) {}, async *
 g() {} });
class C { static
 m() {} get
 y() { return 2 } }
