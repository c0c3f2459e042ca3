log.push('gone ran');
