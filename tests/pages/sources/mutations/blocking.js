window.blocked = true;
