window.ran.push('b3');
