// the line break inside a comment
for(var i = 0; i < 1 // c
) ;
