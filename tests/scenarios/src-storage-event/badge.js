// Shows the cart count in the title and counts this visit again.
document.title = 'Cart: ' + cartCount;
localStorage.setItem('visits', String(Number(localStorage.getItem('visits') || 0) + 1));
