log.push('widget');
