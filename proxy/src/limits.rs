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
    /// Simultaneous client connections served. Further ones wait for a free slot (at most
    /// [`max_waiting`](Self::max_waiting) of them, each for at most
    /// [`wait_timeout`](Self::wait_timeout)) and are closed at once beyond that, so a client is
    /// never left to time out. By default derived from the descriptor limit
    /// ([`Limits::connections_for_descriptors`]).
    pub max_connections: usize,
    /// Connections accepted over the cap that may wait for a slot.
    pub max_waiting: usize,
    /// How long a connection over the cap may wait for a slot before it is closed.
    pub wait_timeout: Duration,
    /// The listen backlog (the kernel caps it at `net.core.somaxconn`): a burst of connection
    /// attempts larger than this loses SYNs, and the client retries only after a second.
    pub listen_backlog: u32,
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
            max_connections: Limits::connections_for_descriptors(descriptor_limit()),
            max_waiting: 4096,
            wait_timeout: Duration::from_secs(10),
            listen_backlog: 8192,
            header_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
            max_h2_streams: 256,
        }
    }
}

impl Limits {
    /// The connection cap for a process allowed `descriptors` open files: a proxied
    /// connection may hold two (the browser's and one towards the origin), and 256 stay free
    /// for the recording, the CA and logs.
    pub fn connections_for_descriptors(descriptors: u64) -> usize {
        let usable = descriptors.saturating_sub(256) / 2;
        usize::try_from(usable)
            .unwrap_or(usize::MAX)
            .clamp(64, 1 << 20)
    }
}

/// The soft limit on open files of this process (1024 when it cannot be read).
pub fn descriptor_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own and reads nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    if ok { lim.rlim_cur } else { 1024 }
}

/// Raises this process's soft limit on open files to its hard limit (what servers do at
/// start, so the default connection cap can be generous); returns the new soft limit.
pub fn raise_descriptor_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return raised.rlim_cur;
            }
        }
    }
    lim.rlim_cur
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

/// Whether two byte strings are equal, in time that does not depend on where they differ
/// (secrets, credentials). Strings of different lengths are unequal; the length itself is not
/// secret (every credential checked here has a fixed length).
///
/// `subtle` rather than a hand-written fold: its comparison is kept opaque to the optimiser,
/// which may turn a plain fold back into an early exit.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    bool::from(subtle::ConstantTimeEq::ct_eq(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_follows_the_descriptor_limit() {
        assert_eq!(Limits::connections_for_descriptors(20_000), 9_872);
        assert_eq!(Limits::connections_for_descriptors(1024), 384);
        assert_eq!(Limits::connections_for_descriptors(10), 64);
        assert!(descriptor_limit() >= 64);
    }

    #[test]
    fn auth_checks_credentials() {
        let a = ProxyAuth::parse("u:p").unwrap();
        assert!(a.check(Some(&HeaderValue::from_static("Basic dTpw"))));
        assert!(a.check(Some(&HeaderValue::from_static("basic dTpw"))));
        assert!(!a.check(Some(&HeaderValue::from_static("Basic dTpq"))));
        assert!(!a.check(Some(&HeaderValue::from_static("Bearer x"))));
        assert!(!a.check(None));
        assert!(ProxyAuth::parse("nocolon").is_err());
        // Same length, one byte off at either end; a prefix; a longer value.
        assert!(!a.check(Some(&HeaderValue::from_static("Basic eTpw"))));
        assert!(!a.check(Some(&HeaderValue::from_static("Basic dTpx"))));
        assert!(!a.check(Some(&HeaderValue::from_static("Basic dTp"))));
        assert!(!a.check(Some(&HeaderValue::from_static("Basic dTpwdTpw"))));
    }

    #[test]
    fn constant_time_eq_is_equality() {
        assert!(constant_time_eq(b"", b""));
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"Secret"));
        // Different lengths are unequal, whichever is the prefix of the other.
        assert!(!constant_time_eq(b"secret", b"secrets"));
        assert!(!constant_time_eq(b"secrets", b"secret"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
