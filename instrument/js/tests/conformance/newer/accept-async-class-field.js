// in a class, async and a line break is a field
class C { async
 foo() {} }
class D { static async
 *m() {} }
({ async *
 foo() {} });
