log.push('parser');
