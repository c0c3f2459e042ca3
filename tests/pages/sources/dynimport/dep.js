export const dep = 1;
window.depRan = true;
