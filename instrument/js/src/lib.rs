//! Semantics-preserving JavaScript instrumentation with swc: logs reads and writes of shared
//! state (globals, captured variables, object properties, arrays) through the runtime entry
//! points documented in `docs/runtime-api.md`.
