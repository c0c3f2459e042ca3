//! Splitting a request into the features the tiers compare.

use super::lookup::MatchConfig;
use crate::model::{Header, header_value};

/// A request broken into comparable parts. Names of query and body parameters are
/// percent-decoded; header names lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFeatures {
    /// Method, upper-cased.
    pub method: String,
    /// Scheme (`https`, `http`).
    pub scheme: String,
    /// `host` or `host:port` (default ports omitted), lower-cased.
    pub host: String,
    /// Path fragments, split at `/`, still percent-encoded (as sent).
    pub path: Vec<String>,
    /// Query pairs in order, decoded.
    pub query: Vec<(String, String)>,
    /// Form fields or top-level JSON keys (values canonical), when the body is one of those.
    pub body_params: Option<Vec<(String, String)>>,
    /// All headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// Normalised absolute URL (what the exact tier compares).
    pub url: String,
}

impl RequestFeatures {
    /// Parses a request. Unparsable URLs keep their raw text as `url` and an empty path.
    pub fn parse(method: &str, url: &str, headers: &[Header], body: &[u8]) -> RequestFeatures {
        let method = method.to_ascii_uppercase();
        let headers_lc: Vec<(String, String)> = headers
            .iter()
            .map(|h| (h.name.to_ascii_lowercase(), h.value_str().into_owned()))
            .collect();
        let body_params = parse_body(header_value(headers, "content-type"), body);
        match url::Url::parse(url) {
            Ok(u) => {
                let host = match (u.host_str(), u.port()) {
                    (Some(h), Some(p)) => format!("{}:{p}", h.to_ascii_lowercase()),
                    (Some(h), None) => h.to_ascii_lowercase(),
                    (None, _) => String::new(),
                };
                let path: Vec<String> = u
                    .path()
                    .trim_start_matches('/')
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                let query: Vec<(String, String)> = u
                    .query_pairs()
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                let mut normal = u.clone();
                normal.set_fragment(None);
                RequestFeatures {
                    method,
                    scheme: u.scheme().to_owned(),
                    host,
                    path,
                    query,
                    body_params,
                    headers: headers_lc,
                    url: normal.to_string(),
                }
            }
            Err(_) => RequestFeatures {
                method,
                scheme: String::new(),
                host: String::new(),
                path: Vec::new(),
                query: Vec::new(),
                body_params,
                headers: headers_lc,
                url: url.to_owned(),
            },
        }
    }

    fn header_part(&self, names: &[String], skip: &[String]) -> String {
        let mut out = String::new();
        for name in names {
            if skip.iter().any(|s| s.eq_ignore_ascii_case(name)) {
                continue;
            }
            let lc = name.to_ascii_lowercase();
            let values: Vec<&str> = self
                .headers
                .iter()
                .filter(|(n, _)| *n == lc)
                .map(|(_, v)| v.as_str())
                .collect();
            out.push_str(&format!(" {lc}={values:?}"));
        }
        out
    }

    /// Key of the exact tier: method, normalised URL, body digest, chosen headers.
    pub fn exact_key(&self, body_sha256: &[u8; 32], config: &MatchConfig) -> String {
        format!(
            "{} {} body:{}{}",
            self.method,
            self.url,
            short_hex(body_sha256),
            self.header_part(&config.use_headers, &[])
        )
    }

    /// Key of the ignore tier: query and body parameters minus the ignore lists, sorted; body
    /// digest when the body is neither a form nor a JSON object.
    pub fn ignore_key(&self, body_sha256: &[u8; 32], config: &MatchConfig) -> String {
        let keep_q = |k: &str| !config.ignore_query_params.iter().any(|i| i == k);
        let mut q: Vec<&(String, String)> = self.query.iter().filter(|(k, _)| keep_q(k)).collect();
        q.sort();
        let body = match &self.body_params {
            Some(params) => {
                let mut b: Vec<&(String, String)> = params
                    .iter()
                    .filter(|(k, _)| !config.ignore_body_params.iter().any(|i| i == k))
                    .collect();
                b.sort();
                format!("params:{b:?}")
            }
            None => short_hex(body_sha256),
        };
        format!(
            "{} {}://{}/{} query:{q:?} body:{body}{}",
            self.method,
            self.scheme,
            self.host,
            self.path.join("/"),
            self.header_part(&config.use_headers, &config.ignore_headers)
        )
    }

    /// `METHOD scheme://host/path` for messages.
    pub fn describe(&self) -> String {
        format!(
            "{} {}://{}/{}",
            self.method,
            self.scheme,
            self.host,
            self.path.join("/")
        )
    }
}

fn short_hex(sha: &[u8; 32]) -> String {
    hex::encode(&sha[..12])
}

/// Form fields or top-level JSON object keys of a body, or `None` for other bodies.
fn parse_body(content_type: Option<&[u8]>, body: &[u8]) -> Option<Vec<(String, String)>> {
    if body.is_empty() {
        return None;
    }
    let ct = content_type
        .map(|c| String::from_utf8_lossy(c).to_ascii_lowercase())
        .unwrap_or_default();
    if ct.starts_with("application/x-www-form-urlencoded") {
        return Some(
            url::form_urlencoded::parse(body)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        );
    }
    let looks_json = ct.contains("json") || body.first() == Some(&b'{');
    if looks_json
        && let Ok(serde_json::Value::Object(map)) =
            serde_json::from_slice::<serde_json::Value>(body)
    {
        return Some(
            map.iter()
                .map(|(k, v)| (k.clone(), canonical_json(v)))
                .collect(),
        );
    }
    None
}

/// JSON text with object keys sorted at every level, so key order never affects matching.
pub(crate) fn canonical_json(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        Value::String((*k).clone()),
                        canonical_json(&map[k.as_str()])
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}
