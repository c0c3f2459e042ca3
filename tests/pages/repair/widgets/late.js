log.push('late');
