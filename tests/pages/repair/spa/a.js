log.push('a');
