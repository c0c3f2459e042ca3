// Renders the header from the configuration the page requested first.
document.getElementById('store-name').textContent = storeConfig.name;
document.getElementById('currency').textContent = 'Prices in ' + storeConfig.currency;
