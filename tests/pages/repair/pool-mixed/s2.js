window.ran.push('s2');
