// Searches in place instead of loading the results page.
document.getElementById('search').addEventListener('submit', function (e) {
  e.preventDefault();
  var q = document.getElementById('q').value;
  document.getElementById('hits').innerHTML = '<li>Results for ' + q + '</li>';
});
