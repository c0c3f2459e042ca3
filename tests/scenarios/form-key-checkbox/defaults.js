// Restores the saved preference (off), clearing the box the user just ticked.
document.getElementById('news').checked = false;
