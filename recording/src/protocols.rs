//! Which protocol each origin spoke during recording, so replay can offer the browser the same
//! ALPN list: an origin that only spoke HTTP/1.1 is replayed over HTTP/1.1 only (a browser that
//! negotiated h2 would otherwise see connection coalescing and multiplexing the page never had).

use crate::error::Result;
use crate::store::Recording;
use std::collections::HashMap;

/// What replay offers for one origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginProtocol {
    /// The origin spoke HTTP/2 (offer `h2`, then `http/1.1`).
    H2,
    /// The origin only spoke HTTP/1.x (offer `http/1.1` only).
    Http1,
}

/// `host:port` with the scheme's default port filled in and the host lower-cased, so
/// `Example.com` and `example.com:443` name the same origin.
pub fn normalize_authority(authority: &str, default_port: u16) -> String {
    let authority = authority.to_ascii_lowercase();
    // An IPv6 literal keeps its brackets; its port comes after `]`.
    let has_port = match authority.rfind(']') {
        Some(end) => authority[end..].contains(':'),
        None => authority.contains(':'),
    };
    if has_port {
        authority
    } else {
        format!("{authority}:{default_port}")
    }
}

fn from_alpn(alpn: &str) -> Option<OriginProtocol> {
    match alpn {
        "h2" => Some(OriginProtocol::H2),
        "http/1.1" | "http/1.0" => Some(OriginProtocol::Http1),
        _ => None,
    }
}

fn from_version(version: &str) -> Option<OriginProtocol> {
    match version {
        "HTTP/2" | "HTTP/2.0" => Some(OriginProtocol::H2),
        "HTTP/1.1" | "HTTP/1.0" => Some(OriginProtocol::Http1),
        _ => None,
    }
}

/// Keeps h2 when any evidence says h2: offering h2 still lets the browser fall back.
fn merge(map: &mut HashMap<String, OriginProtocol>, key: String, p: OriginProtocol) {
    let e = map.entry(key).or_insert(p);
    if p == OriginProtocol::H2 {
        *e = OriginProtocol::H2;
    }
}

impl Recording {
    /// The protocol of every HTTPS origin in the recording, keyed by normalised `host:port`
    /// ([`normalize_authority`] with 443). The `hosts` table decides where it has a row for the
    /// origin (any session that saw h2 makes it h2); origins without one (HAR imports, older
    /// recordings) are judged by the `resp_http_version` of their exchanges.
    pub fn origin_protocols(&self) -> Result<HashMap<String, OriginProtocol>> {
        let mut from_hosts = HashMap::new();
        for h in self.host_protocols()? {
            if let Some(p) = from_alpn(&h.alpn) {
                merge(&mut from_hosts, normalize_authority(&h.authority, 443), p);
            }
        }
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(
            "SELECT DISTINCT url, resp_http_version FROM exchanges
             WHERE status IS NOT NULL AND url LIKE 'https://%'",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?;
        let mut from_exchanges = HashMap::new();
        for row in rows {
            let (url, version) = row?;
            let Some(p) = version.as_deref().and_then(from_version) else {
                continue;
            };
            let Ok(u) = url::Url::parse(&url) else {
                continue;
            };
            let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) else {
                continue;
            };
            merge(
                &mut from_exchanges,
                normalize_authority(&format!("{host}:{port}"), 443),
                p,
            );
        }
        for (k, p) in from_exchanges {
            from_hosts.entry(k).or_insert(p);
        }
        Ok(from_hosts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_are_normalised() {
        assert_eq!(normalize_authority("Example.com", 443), "example.com:443");
        assert_eq!(normalize_authority("a.test:8443", 443), "a.test:8443");
        assert_eq!(normalize_authority("[::1]", 443), "[::1]:443");
        assert_eq!(normalize_authority("[::1]:9", 443), "[::1]:9");
    }
}
