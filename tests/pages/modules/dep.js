export const dep = 1;
