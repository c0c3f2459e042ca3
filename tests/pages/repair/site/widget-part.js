log.push('widget-part');
