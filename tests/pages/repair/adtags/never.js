log.push('never');
