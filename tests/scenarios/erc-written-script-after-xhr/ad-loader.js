// Fills the ad slot for the visitor's segment.
document.getElementById('ad').textContent = 'Offers for ' + session.segment;
