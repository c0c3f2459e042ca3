window.ran.push('i3');
