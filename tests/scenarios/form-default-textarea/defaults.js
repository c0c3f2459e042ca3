// Loaded async; sets the hint text as the textarea's content.
document.getElementById('message').value = 'Write your message here';
