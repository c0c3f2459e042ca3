// No imports: this module's own registration is the first of its run (an export makes the
// proxy parse it as a module).
export const ran = 1;
window.insRan = ran;
