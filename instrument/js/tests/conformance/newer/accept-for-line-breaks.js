// line breaks and comments around both semicolons
for(
var i = 0
;
i < 1
;
i++
) ;
for(;;
) break;
for(x
;;) break;
for (/*a*/;/*b
*/;/*c*/) break;
