order.push('inserted'); var insertedVar = setTimeout(function () {}, 5);
