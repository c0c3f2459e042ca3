export const items = [1, 2];
