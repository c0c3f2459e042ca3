order.push('defer'); var deferVar = document.getElementById('p2');
