// Sends the price the page knows now to the checkout.
fetch('checkout.txt?price=' + price, { method: 'POST' });
