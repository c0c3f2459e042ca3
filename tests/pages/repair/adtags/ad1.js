log.push('ad1'); document.write('<script src="ad3.js"><\/script>'); log.push('ad1 end');
