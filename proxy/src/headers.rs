//! Header rules for crossing the proxy: hop-by-hop headers never cross, several `Cookie`
//! headers (legal in HTTP/2) become one for HTTP/1, and `Alt-Svc` is dropped so the browser
//! never leaves the proxy for QUIC.

use http::header::{self, HeaderMap, HeaderName, HeaderValue};

const PROXY_CONNECTION: HeaderName = HeaderName::from_static("proxy-connection");
const KEEP_ALIVE: HeaderName = HeaderName::from_static("keep-alive");

/// Removes the headers named in `Connection` plus the fixed hop-by-hop set.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if let Some(conn) = headers.remove(header::CONNECTION) {
        if let Ok(list) = conn.to_str() {
            for name in list.split(',') {
                let name = name.trim();
                if !name.is_empty() {
                    headers.remove(name);
                }
            }
        }
        // Several Connection headers: remove the rest too.
        while headers.remove(header::CONNECTION).is_some() {}
    }
    headers.remove(KEEP_ALIVE);
    headers.remove(PROXY_CONNECTION);
    headers.remove(header::TRANSFER_ENCODING);
    headers.remove(header::UPGRADE);
    headers.remove(header::TRAILER);
}

/// Prepares browser request headers for the origin.
pub fn request_to_origin(headers: &mut HeaderMap) {
    strip_hop_by_hop(headers);
    headers.remove(header::PROXY_AUTHORIZATION);
    // The URI carries the authority; the client sets Host (h1) or :authority (h2) from it.
    headers.remove(header::HOST);
    if let Some(te) = headers.get(header::TE)
        && te.as_bytes() != b"trailers"
    {
        headers.remove(header::TE);
    }
    join_cookies(headers);
}

/// Prepares origin response headers for the browser.
pub fn response_to_browser(headers: &mut HeaderMap) {
    strip_hop_by_hop(headers);
    headers.remove(header::ALT_SVC);
    headers.remove(header::PROXY_AUTHENTICATE);
}

/// Joins several `Cookie` headers with `; ` (HTTP/2 browsers send one per cookie).
pub fn join_cookies(headers: &mut HeaderMap) {
    let mut it = headers.get_all(header::COOKIE).iter();
    let (Some(first), Some(_)) = (it.next(), it.next()) else {
        return;
    };
    let mut joined = first.as_bytes().to_vec();
    for v in headers.get_all(header::COOKIE).iter().skip(1) {
        joined.extend_from_slice(b"; ");
        joined.extend_from_slice(v.as_bytes());
    }
    if let Ok(v) = HeaderValue::from_bytes(&joined) {
        headers.insert(header::COOKIE, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_and_joins() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, x-foo"),
        );
        h.insert("x-foo", HeaderValue::from_static("1"));
        h.insert("x-bar", HeaderValue::from_static("2"));
        h.insert(header::HOST, HeaderValue::from_static("a.test"));
        h.insert(header::TE, HeaderValue::from_static("gzip"));
        h.append(header::COOKIE, HeaderValue::from_static("a=1"));
        h.append(header::COOKIE, HeaderValue::from_static("b=2"));
        request_to_origin(&mut h);
        assert!(h.get("x-foo").is_none());
        assert!(h.get(header::HOST).is_none());
        assert!(h.get(header::TE).is_none());
        assert_eq!(h.get("x-bar").unwrap(), "2");
        assert_eq!(h.get_all(header::COOKIE).iter().count(), 1);
        assert_eq!(h.get(header::COOKIE).unwrap(), "a=1; b=2");
    }
}
