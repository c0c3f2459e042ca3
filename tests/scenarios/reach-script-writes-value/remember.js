// Fills in the address this browser signed in with last time, and a hint for the city.
document.getElementById('email').value = 'last.time@example.com';
document.getElementById('city').placeholder = 'Berlin';
