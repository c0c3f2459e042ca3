// Gives UMD wrappers a `window` to attach to inside the vm context.
var window = globalThis;
