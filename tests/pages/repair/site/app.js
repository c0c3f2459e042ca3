log.push('app'); setTimeout(function () { log.push('app-timer'); }, 5);
