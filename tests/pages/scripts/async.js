order.push('async'); var asyncVar = document.getElementById('p1');
