window.ran.push('s8');
