window.ran.push('i1');
