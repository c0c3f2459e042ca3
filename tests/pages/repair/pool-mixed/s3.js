window.ran.push('s3');
