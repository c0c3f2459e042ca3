log.push('legacy');
