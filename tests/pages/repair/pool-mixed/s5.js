window.ran.push('s5');
