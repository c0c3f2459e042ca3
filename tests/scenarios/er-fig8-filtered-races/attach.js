// Late attachment: a click on b1 before this runs does nothing (§5.3, harmless).
document.getElementById('b1').addEventListener('click', f);
