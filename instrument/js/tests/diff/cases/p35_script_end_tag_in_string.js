// options: inline_script
// output-not-contains: </script
// Pitfall 35: </script> and <!-- inside strings of inline scripts are escaped.
var s = "</script><!-- -->";
var t = `</script>`;
console.log(s.length, s, t);
