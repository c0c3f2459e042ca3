window.ran.push('s7');
