window.ran.push('s4');
