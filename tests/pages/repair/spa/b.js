log.push('b');
