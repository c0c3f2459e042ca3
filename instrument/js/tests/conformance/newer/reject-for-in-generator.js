// a generator as the body of for-in
for (var x in {}) function* g() {}
