//! Page instrumentation: streaming HTML rewriting with lol_html (bootstrap injection, inline
//! scripts, `on*` attributes, `javascript:` URLs, CSP and SRI), character encodings, and the
//! instrumentation cache. JavaScript itself goes through `shepherd-instrument-js`.
