//! Safety limits and proxy authentication.

use base64::Engine;
use http::HeaderValue;
use std::time::Duration;

/// Bounds on what one client may make the proxy hold or wait for.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request head (HTTP/1 read buffer / HTTP/2 header list), bytes.
    pub max_header_bytes: usize,
    /// Largest body accepted by the reserved endpoints, bytes.
    pub max_control_body: usize,
    /// Largest script body collected for whole-body rewriting; larger ones pass untouched.
    pub max_rewrite_body: usize,
    /// Simultaneous client connections; further ones are closed at once.
    pub max_connections: usize,
    /// Time a client has to send a complete request head.
    pub header_timeout: Duration,
    /// Time a client has to start TLS after CONNECT.
    pub handshake_timeout: Duration,
    /// Longest silence allowed while the proxy waits for more of a request body; the request
    /// is then answered 408 (when no response started yet) and its connection closed.
    pub body_timeout: Duration,
    /// HTTP/2 streams per client connection.
    pub max_h2_streams: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_header_bytes: 64 * 1024,
            max_control_body: 16 * 1024 * 1024,
            max_rewrite_body: 32 * 1024 * 1024,
            max_connections: 4096,
            header_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
            max_h2_streams: 256,
        }
    }
}

/// `user:pass` credentials required in `Proxy-Authorization` (or `Authorization` in reverse
/// mode). Holds the exact header value expected, so checking costs one comparison.
#[derive(Debug, Clone)]
pub struct ProxyAuth {
    expected: Vec<u8>,
}

impl ProxyAuth {
    /// Parses `user:pass`.
    pub fn parse(user_pass: &str) -> Result<Self, String> {
        if !user_pass.contains(':') {
            return Err("--auth expects user:pass".into());
        }
        let token = base64::engine::general_purpose::STANDARD.encode(user_pass);
        Ok(Self {
            expected: format!("Basic {token}").into_bytes(),
        })
    }

    /// Whether `value` carries the right credentials.
    pub fn check(&self, value: Option<&HeaderValue>) -> bool {
        let Some(v) = value else { return false };
        let v = v.as_bytes();
        // Scheme name is case-insensitive; compare it separately.
        if v.len() != self.expected.len() || !v[..6].eq_ignore_ascii_case(b"basic ") {
            return false;
        }
        constant_time_eq(&v[6..], &self.expected[6..])
    }
}

/// Compares two byte strings without an early exit (secrets, credentials).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_checks_credentials() {
        let a = ProxyAuth::parse("u:p").unwrap();
        assert!(a.check(Some(&HeaderValue::from_static("Basic dTpw"))));
        assert!(a.check(Some(&HeaderValue::from_static("basic dTpw"))));
        assert!(!a.check(Some(&HeaderValue::from_static("Basic dTpq"))));
        assert!(!a.check(Some(&HeaderValue::from_static("Bearer x"))));
        assert!(!a.check(None));
        assert!(ProxyAuth::parse("nocolon").is_err());
    }
}
