// Pre-selects the second country by index, replacing the user's choice.
document.getElementById('country').selectedIndex = 1;
