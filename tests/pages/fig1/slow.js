function doSomething() { window.didSomething = true; }
