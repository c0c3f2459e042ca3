window.lateRan = true;
