log.push('o1');
