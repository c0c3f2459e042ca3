// Arrives late. Whoever reads y checks init first, so the race on y cannot show.
y = { g: 42 };
init = true;
