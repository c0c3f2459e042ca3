// an escaped set
({ s\u0065t x(v) {} });
