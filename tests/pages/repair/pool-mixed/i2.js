window.ran.push('i2');
