// a missing second semicolon after the test
for(false;false
) {}
