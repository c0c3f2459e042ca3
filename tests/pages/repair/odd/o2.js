log.push('o2');
