window.ran.push('s6');
