export const v = 2;
window.dynRan = v;
