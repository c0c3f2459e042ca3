window.ran.push('i4');
