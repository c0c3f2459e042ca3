//! Source positions as reports write them (`url:line:col`, 1-based, columns in UTF-16 code
//! units) and the mapping of page URLs onto repository paths, so code scanning can anchor a
//! race at the file that holds the racing line.

/// A position in a file served to the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The file's URL (for inline code: the document's URL, when the report knew its text).
    pub url: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (UTF-16 code units).
    pub col: u32,
}

impl Position {
    /// Reads `url:line:col`. The URL may hold colons itself (scheme, port), so the two
    /// numbers are taken from the end; `None` unless both are positive integers.
    pub fn parse(s: &str) -> Option<Position> {
        let (rest, col) = s.rsplit_once(':')?;
        let (url, line) = rest.rsplit_once(':')?;
        let line: u32 = line.parse().ok()?;
        let col: u32 = col.parse().ok()?;
        (line > 0 && col > 0 && !url.is_empty()).then(|| Position {
            url: url.to_string(),
            line,
            col,
        })
    }

    /// `url:line:col`.
    pub fn display(&self) -> String {
        format!("{}:{}:{}", self.url, self.line, self.col)
    }
}

/// Rewrites page URLs into paths of the repository that serves them (`--map-url
/// https://staging.example/static/=web/static/`): code scanning shows a result on a file of
/// the repository only when its location names one. URLs no prefix matches stay as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlMap {
    /// `(URL prefix, path prefix)`, longest URL prefix first.
    prefixes: Vec<(String, String)>,
}

impl UrlMap {
    /// Parses `PREFIX=PATH` pairs. The path must be relative (SARIF's `uri` then resolves
    /// against the checkout) and may be empty (the URL prefix is the repository's root).
    pub fn parse<S: AsRef<str>>(pairs: &[S]) -> Result<UrlMap, String> {
        let mut prefixes = Vec::new();
        for pair in pairs {
            let pair = pair.as_ref();
            let Some((url, path)) = pair.split_once('=') else {
                return Err(format!(
                    "{pair:?}: expected URL_PREFIX=PATH (e.g. https://staging.example/=web/)"
                ));
            };
            if url.is_empty() {
                return Err(format!("{pair:?}: the URL prefix is empty"));
            }
            if path.starts_with('/') || path.contains("://") || path.contains('\\') {
                return Err(format!(
                    "{pair:?}: the path must be relative to the repository, with / separators"
                ));
            }
            prefixes.push((url.to_string(), path.to_string()));
        }
        prefixes.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Ok(UrlMap { prefixes })
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// The URI a result names for `url`: the mapped repository path (query and fragment
    /// dropped: an inline script's `#inline-1` is not a file), else `url` itself.
    pub fn uri(&self, url: &str) -> String {
        for (prefix, path) in &self.prefixes {
            if let Some(rest) = url.strip_prefix(prefix.as_str()) {
                let end = rest.find(['?', '#']).unwrap_or(rest.len());
                return format!("{path}{}", &rest[..end]);
            }
        }
        url.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_read_from_the_end() {
        assert_eq!(
            Position::parse("https://a.test:8443/app.js:4:10"),
            Some(Position {
                url: "https://a.test:8443/app.js".into(),
                line: 4,
                col: 10
            })
        );
        assert_eq!(
            Position::parse("https://a.test/#inline-1:1:2").map(|p| p.url),
            Some("https://a.test/#inline-1".into())
        );
        for bad in [
            "",
            "app.js",
            "app.js:3",
            ":3:4",
            "app.js:0:1",
            "app.js:x:1",
            "a:1:-1",
        ] {
            assert_eq!(Position::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_longest_prefix_maps_and_others_stay() {
        let map =
            UrlMap::parse(&["https://a.test/=web/", "https://a.test/static/=assets/"]).unwrap();
        assert_eq!(map.uri("https://a.test/static/app.js?v=3"), "assets/app.js");
        assert_eq!(
            map.uri("https://a.test/index.html#inline-1"),
            "web/index.html"
        );
        assert_eq!(map.uri("https://cdn.test/x.js"), "https://cdn.test/x.js");
        assert!(UrlMap::parse(&["nope"]).is_err());
        assert!(UrlMap::parse(&["https://a.test/=/etc/"]).is_err());
        assert!(UrlMap::parse(&["=web/"]).is_err());
    }
}
