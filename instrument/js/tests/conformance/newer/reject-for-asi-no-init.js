// a missing second semicolon, no init
for(;false
) {}
