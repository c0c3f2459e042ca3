window.twoRan = true;
