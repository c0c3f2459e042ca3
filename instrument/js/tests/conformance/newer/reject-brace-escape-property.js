// a separator in a property name's escape
({ \u{6_1}: 1 });
