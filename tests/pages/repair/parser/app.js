window.appRan = true;
