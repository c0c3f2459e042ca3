order.push('ext'); var extVar = document.getElementById('p1');
