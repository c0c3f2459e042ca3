log.push('inserted-defer');
