export const plain = 1;
window.plainRan = true;
