// The header's widgets (here: nothing but the time it takes to load them).
window.widgetsReady = true;
