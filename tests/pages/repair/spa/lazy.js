export const name = 'lazy';
