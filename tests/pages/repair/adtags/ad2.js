log.push('ad2');
