log.push('never ran');
