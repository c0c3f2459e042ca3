import { dep } from './dep.js?delay=60';
export const withDep = dep + 1;
window.withDepRan = true;
