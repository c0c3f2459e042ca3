window.ran.push('b2');
