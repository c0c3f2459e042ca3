log.push('later ran');
