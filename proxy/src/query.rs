//! Query strings of the reserved endpoints, decoded and encoded with the `form_urlencoded`
//! rules browsers use (`url`'s implementation).

use std::borrow::Cow;
use url::form_urlencoded;

/// The decoded value of the first `name` parameter of `query` (`a=1&b`: `b` has value "").
pub(crate) fn param<'a>(query: &'a str, name: &str) -> Option<Cow<'a, str>> {
    form_urlencoded::parse(query.as_bytes()).find_map(|(k, v)| (k == name).then_some(v))
}

/// `value` escaped for use as a query value.
pub(crate) fn encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_encodes_query_values() {
        assert_eq!(param("u=a%2Fb+c", "u").as_deref(), Some("a/b c"));
        assert_eq!(param("u=100%", "u").as_deref(), Some("100%"));
        assert_eq!(param("u=%zz", "u").as_deref(), Some("%zz"));
        let url = "https://a.test/x y.js?q=1&r=é";
        let q = format!("url={}", encode(url));
        assert_eq!(param(&q, "url").as_deref(), Some(url));
        assert!(!encode(url).contains(['&', '?', '/', ' ', '=']));
        assert_eq!(param("s=1&doc=x", "doc").as_deref(), Some("x"));
        assert_eq!(param("s=1&doc", "doc").as_deref(), Some(""));
        assert_eq!(param("s=1", "doc"), None);
    }
}
