log.push('analytics'); fetch('collect.json');
