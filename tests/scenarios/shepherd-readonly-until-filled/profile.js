// Once the document is parsed, fills the field with the saved display name, then lets the user
// edit it. Until then the field is read-only, so nothing the user types can be overwritten by
// this write.
document.addEventListener('DOMContentLoaded', function () {
  var field = document.getElementById('name');
  field.value = 'Ada L.';
  field.readOnly = false;
});
