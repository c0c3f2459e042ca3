// an escaped get
({ g\u0065t x() {} });
