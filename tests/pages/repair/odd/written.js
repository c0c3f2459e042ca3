log.push('written');
