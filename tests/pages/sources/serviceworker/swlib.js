var swCalls = 0;
function answerFrom() {
  swCalls = swCalls + 1;
  return 'service worker';
}
