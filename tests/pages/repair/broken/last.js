log.push('last');
