//! The injected event controller, embedded in the binary. The JavaScript sources live in this
//! folder; the proxy serves [`runtime_js`] at `/__shepherd/runtime.js`.
