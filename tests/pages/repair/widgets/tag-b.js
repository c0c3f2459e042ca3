log.push('tag b'); new Image().src = 'pixel.svg?tag-b';
