//! The two credentials of a run, kept apart so that nothing a page can read steers the proxy:
//!
//! - the **operator secret** unlocks the control surface (holds, releases, replay reset,
//!   stats) and the in-page controller (`__shepherd.control(secret)`, which only knows its
//!   SHA-256). It is never written into a page; it reaches the operator's tools in process, on
//!   the control listener, or over DevTools.
//! - a **page credential** per origin (`t=`), an HMAC of the origin under a key that never
//!   leaves the proxy. The HTML rewriter writes it into the runtime's URL, so every script of
//!   that origin can read it; it opens that origin's trace upload and instrument endpoints and
//!   nothing else. Trace document ids start with a prefix of it, so one origin cannot write into
//!   another origin's trace.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// A fresh per-run secret: 128 random bits, hex encoded.
pub fn random_secret() -> String {
    let bytes: [u8; 16] = rand::random();
    hex::encode(bytes)
}

/// Characters of a page credential that prefix its documents' trace ids.
pub(crate) const DOC_PREFIX_LEN: usize = 12;

/// The credentials of one proxy.
pub(crate) struct Secrets {
    operator: String,
    page_key: [u8; 32],
}

impl Secrets {
    /// `operator` (random when `None`) and a random page key.
    pub fn new(operator: Option<String>) -> Secrets {
        Secrets {
            operator: operator.unwrap_or_else(random_secret),
            page_key: rand::random(),
        }
    }

    /// The operator secret.
    pub fn operator(&self) -> &str {
        &self.operator
    }

    /// Whether `given` is the operator secret (constant time).
    pub fn is_operator(&self, given: &str) -> bool {
        crate::limits::constant_time_eq(given.as_bytes(), self.operator.as_bytes())
    }

    /// The page credential of `origin` (`scheme://host:port`, lower-case, explicit port): 128
    /// bits of HMAC-SHA-256, hex.
    pub fn page_token(&self, origin: &str) -> String {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.page_key) else {
            // Unreachable: HMAC takes keys of any length.
            return String::new();
        };
        mac.update(origin.as_bytes());
        let tag = mac.finalize().into_bytes();
        hex::encode(&tag[..16])
    }

    /// Whether `given` is `origin`'s page credential (constant time).
    pub fn is_page_token(&self, origin: &str, given: &str) -> bool {
        crate::limits::constant_time_eq(given.as_bytes(), self.page_token(origin).as_bytes())
    }

    /// Whether trace document `doc` belongs to `origin`: its id starts with the first
    /// [`DOC_PREFIX_LEN`] characters of the origin's credential and a dot.
    pub fn owns_doc(&self, origin: &str, doc: &str) -> bool {
        let token = self.page_token(origin);
        let prefix = &token[..DOC_PREFIX_LEN];
        doc.len() > DOC_PREFIX_LEN
            && crate::limits::constant_time_eq(&doc.as_bytes()[..DOC_PREFIX_LEN], prefix.as_bytes())
            && doc.as_bytes()[DOC_PREFIX_LEN] == b'.'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_credentials_are_per_origin_and_per_run() {
        let s = Secrets::new(Some("op".into()));
        let a = s.page_token("https://a.test:443");
        let b = s.page_token("https://b.test:443");
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert_eq!(a, s.page_token("https://a.test:443"));
        assert!(s.is_page_token("https://a.test:443", &a));
        assert!(!s.is_page_token("https://b.test:443", &a));
        // Another run, same origin: another credential.
        assert_ne!(
            a,
            Secrets::new(Some("op".into())).page_token("https://a.test:443")
        );
        let doc = format!("{}.1f2e", &a[..DOC_PREFIX_LEN]);
        assert!(s.owns_doc("https://a.test:443", &doc));
        assert!(!s.owns_doc("https://b.test:443", &doc));
        assert!(!s.owns_doc("https://a.test:443", &a[..DOC_PREFIX_LEN]));
        assert!(!s.owns_doc("https://a.test:443", "x"));
        assert!(s.is_operator("op") && !s.is_operator("o") && !s.is_operator(&a));
    }
}
