log.push('o3');
