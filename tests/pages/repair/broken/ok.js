log.push('ok');
