// Talks to the chat frame once it has loaded.
function chatFrameLoaded(frame) {
  var title = frame.contentDocument ? frame.contentDocument.title : 'chat';
  document.getElementById('chat-status').textContent = 'Chat: ' + title + ' ready';
}
