export const routes = ['home', 'cart'];
