//! TLS-intercepting record/replay proxy: CA and leaf certificates, CONNECT, HTTP/1.1 and HTTP/2
//! on both sides, body decoding, the rewrite hook, holds and the reserved `/__shepherd/*` endpoints.
