// a missing second semicolon after a let head
for(let i=0;i<1
) ;
