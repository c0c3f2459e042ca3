//! Source maps of rewritten scripts. The rewrite hook maps instrumented code back to the script
//! as the origin served it; when that script had its own map (a `SourceMap`/`X-SourceMap` header
//! or a `sourceMappingURL` comment naming an http(s) URL), the proxy chains the two when devtools
//! ask for the map, so positions lead to the page's original sources.

use http::HeaderMap;
use http::header::{HeaderName, HeaderValue};
use swc_sourcemap::SourceMap;

/// Where source maps of rewritten scripts are served (`<prefix><id>.map?url=SCRIPT`).
pub(crate) const MAP_PREFIX: &str = "/__shepherd/map/";

/// Whether `id` can name a map: 1 to 128 ASCII letters, digits, `-` and `_` (it goes into a
/// header and a path unescaped).
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Points the browser at our map of a rewritten script: the page's own map described the code
/// before instrumentation (`/__shepherd/map/ID.map?url=SCRIPT[&page=PAGE_MAP]`, resolved
/// against the script's origin; with `page`, the proxy chains the page's map when serving ours).
pub(crate) fn point_at(headers: &mut HeaderMap, id: &str, url: &str, page_map: Option<&str>) {
    headers.remove(HeaderName::from_static("sourcemap"));
    headers.remove(HeaderName::from_static("x-sourcemap"));
    if !valid_id(id) {
        tracing::warn!(url, "rewriter returned an unusable source map id");
        return;
    }
    let mut value = format!("{MAP_PREFIX}{id}.map?url={}", crate::query::encode(url));
    if let Some(page) = page_map {
        value.push_str("&page=");
        value.push_str(&crate::query::encode(page));
    }
    if let Ok(v) = HeaderValue::from_str(&value) {
        headers.insert(HeaderName::from_static("sourcemap"), v);
    }
}

/// The absolute http(s) URL of the page's own map for the script at `script_url`: the
/// `SourceMap` header, else `X-SourceMap`, else the last `sourceMappingURL` comment of the
/// source. `data:` maps and anything unresolvable give `None`.
pub(crate) fn page_map_url(headers: &HeaderMap, source: &[u8], script_url: &str) -> Option<String> {
    let from_header = [
        HeaderName::from_static("sourcemap"),
        HeaderName::from_static("x-sourcemap"),
    ]
    .iter()
    .find_map(|n| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    let reference = match from_header {
        Some(r) => r,
        None => comment_reference(source)?,
    };
    let base = url::Url::parse(script_url).ok()?;
    let resolved = base.join(reference.trim()).ok()?;
    matches!(resolved.scheme(), "http" | "https").then(|| resolved.to_string())
}

/// The value of the last `//# sourceMappingURL=` (or `//@`) comment near the end of `source`.
fn comment_reference(source: &[u8]) -> Option<String> {
    let tail = &source[source.len().saturating_sub(4096)..];
    let text = String::from_utf8_lossy(tail);
    let at = text
        .rfind("# sourceMappingURL=")
        .or_else(|| text.rfind("@ sourceMappingURL="))?;
    let value = &text[at + "# sourceMappingURL=".len()..];
    let value: String = value
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '*')
        .collect();
    (!value.is_empty()).then_some(value)
}

/// `ours` (instrumented code → script as served) on top of `page` (script as served → the
/// page's sources, fetched from `page_url`): instrumented code → the page's sources. The
/// page's sources become absolute URLs, since the chained map is served from another path.
pub(crate) fn chain(ours: &str, page: &[u8], page_url: &str) -> Result<String, String> {
    let ours = SourceMap::from_slice(ours.as_bytes()).map_err(|e| format!("our map: {e}"))?;
    let mut page = SourceMap::from_slice(page).map_err(|e| format!("page map: {e}"))?;
    let base = url::Url::parse(page_url).map_err(|e| e.to_string())?;
    let absolute: Vec<String> = (0..page.get_source_count())
        .map(|i| {
            let s = page
                .get_source(i)
                .map(|s| s.to_string())
                .unwrap_or_default();
            base.join(&s).map_or(s, |u| u.to_string())
        })
        .collect();
    page.set_source_root(None::<String>);
    for (i, s) in absolute.into_iter().enumerate() {
        page.set_source(i as u32, s.into());
    }
    page.adjust_mappings(&ours);
    page.set_file(ours.get_file().map(|f| f.to_string()));
    let mut out = Vec::new();
    page.to_writer(&mut out).map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_page_map_reference() {
        let mut h = HeaderMap::new();
        let js = b"f();\n//# sourceMappingURL=app.min.js.map\n";
        assert_eq!(
            page_map_url(&h, js, "https://a.test/js/app.min.js").as_deref(),
            Some("https://a.test/js/app.min.js.map")
        );
        assert_eq!(
            page_map_url(&h, b"/*# sourceMappingURL=x.map */", "https://a.test/y.js").as_deref(),
            Some("https://a.test/x.map")
        );
        let data = b"f();\n//# sourceMappingURL=data:application/json;base64,e30=\n";
        assert_eq!(page_map_url(&h, data, "https://a.test/y.js"), None);
        h.insert("x-sourcemap", "/maps/y.map".parse().unwrap());
        assert_eq!(
            page_map_url(&h, js, "https://a.test/js/y.js").as_deref(),
            Some("https://a.test/maps/y.map")
        );
        assert_eq!(
            page_map_url(&HeaderMap::new(), b"f()", "https://a.test/y.js"),
            None
        );
    }

    #[test]
    fn chains_through_the_page_map() {
        // Page map: served line 0 col 0 -> src/app.ts line 5 col 2 (sources relative).
        let page = br#"{"version":3,"sources":["../src/app.ts"],"names":[],"mappings":"AAKE"}"#;
        // Ours: instrumented line 1 col 0 -> served line 0 col 0 (a marker line was added).
        let ours = r#"{"version":3,"sources":["shepherd:x.js"],"names":[],"mappings":";AAAA"}"#;
        let out = chain(ours, page, "https://a.test/js/app.js.map").unwrap();
        let m = SourceMap::from_slice(out.as_bytes()).unwrap();
        assert_eq!(
            m.get_source(0).map(|s| s.to_string()).as_deref(),
            Some("https://a.test/src/app.ts")
        );
        let t = m.lookup_token(1, 0).unwrap();
        assert_eq!((t.get_src_line(), t.get_src_col()), (5, 2));
        assert!(chain(ours, b"not json", "https://a.test/m.map").is_err());
    }
}
