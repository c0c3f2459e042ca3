log.push('tag a');
