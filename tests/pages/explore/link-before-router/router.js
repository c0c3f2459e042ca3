// The single-page router: a click on the link shows the next view in place. Before this
// script has run, the same click leaves the page.
document.getElementById('next').addEventListener('click', function (e) {
  e.preventDefault();
  document.getElementById('out').textContent = 'next view';
});
