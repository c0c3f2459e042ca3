log.push('evald');
