window.oneRan = true;
