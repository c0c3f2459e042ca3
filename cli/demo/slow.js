// Served late on purpose (?delay=): until it runs, clicks on "Show price" say "not ready".
y = { g: 42 };
init = true;
