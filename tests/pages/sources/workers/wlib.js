function label(x) {
  return 'got ' + x;
}
