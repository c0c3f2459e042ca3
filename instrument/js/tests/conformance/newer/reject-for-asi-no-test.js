// a missing second semicolon, no test
for(x;
) ;
