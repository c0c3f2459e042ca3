log.push('async writer'); document.write('<script src="never.js"><\/script>');
