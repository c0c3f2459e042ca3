log.push('vbscript');
