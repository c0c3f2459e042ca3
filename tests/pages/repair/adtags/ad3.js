log.push('ad3');
