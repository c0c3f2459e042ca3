log.push('ad4');
