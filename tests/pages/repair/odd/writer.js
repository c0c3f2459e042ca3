log.push('writer'); document.write('<script src="written.js"><\/script>');
