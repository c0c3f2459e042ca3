log.push('inserted');
