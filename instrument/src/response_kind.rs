//! What a response is to the browser, decided from its `Content-Type` and the request's
//! `Sec-Fetch-*` headers the way Chromium decides it: a document (gets the runtime), a classic
//! script or a module (go through the JS pass), or something the browser will not run. Every
//! script the browser executes must be instrumented, so a classic script is one whatever its
//! type unless the browser refuses it (`nosniff` with a non-JavaScript type; `image/*`,
//! `audio/*`, `video/*`, `text/csv`, per the Fetch standard's "should response to request be
//! blocked due to its MIME type?"); modules and workers need a JavaScript type.

use crate::script_type::is_javascript_essence;

/// What the request said about itself (its `Sec-Fetch-Dest` and `Sec-Fetch-Mode`; empty when
/// absent, e.g. from a client that does not send them).
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchContext<'a> {
    /// `Sec-Fetch-Dest`: `document`, `iframe`, `script`, `worker`, `empty`, …
    pub dest: &'a str,
    /// `Sec-Fetch-Mode`: `navigate`, `no-cors`, `cors`, …
    pub mode: &'a str,
}

/// The treatment of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    /// An HTML document (top-level or frame): the runtime is injected, inline code instrumented.
    Document,
    /// JavaScript the browser runs as a classic script, or (`module`) as an ES module. A
    /// CORS-mode script may still be classic (`crossorigin`): try classic first.
    Script {
        /// Fetched in CORS mode: a module, or a classic script with `crossorigin`.
        maybe_module: bool,
    },
    /// A worker's script (dedicated, shared or service worker).
    WorkerScript,
    /// Not run as code by the browser (data, styles, images, HTML fetched by XHR, …).
    Other,
    /// A script request whose response the browser refuses to run; the reason is for logs.
    Refused(&'static str),
}

/// The essence (`type/subtype`) of a `Content-Type` value, lower-cased.
pub fn mime_essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether a `Content-Type` value names a JavaScript MIME type (`text/javascript`,
/// `application/x-javascript`, `text/jscript`, … all sixteen of the HTML standard).
pub fn is_javascript_mime(content_type: &str) -> bool {
    is_javascript_essence(&mime_essence(content_type))
}

/// Types a browser never runs as script, `nosniff` or not.
fn blocked_for_scripts(essence: &str) -> bool {
    essence.starts_with("image/")
        || essence.starts_with("audio/")
        || essence.starts_with("video/")
        || essence == "text/csv"
}

/// Classifies a successful response by its `Content-Type` (whole header value), whether it
/// carries `X-Content-Type-Options: nosniff`, and the request's fetch context.
pub fn classify(content_type: &str, nosniff: bool, fetch: FetchContext<'_>) -> ResponseKind {
    let essence = mime_essence(content_type);
    let javascript = is_javascript_essence(&essence);
    match fetch.dest {
        "document" | "iframe" | "frame" | "" if is_html(&essence) => ResponseKind::Document,
        "script" => {
            let maybe_module = fetch.mode == "cors";
            if javascript {
                ResponseKind::Script { maybe_module }
            } else if blocked_for_scripts(&essence) {
                ResponseKind::Refused("the browser never runs this type as a script")
            } else if nosniff {
                ResponseKind::Refused("nosniff with a non-JavaScript type")
            } else if maybe_module {
                // A module needs a JavaScript type; a classic `crossorigin` script does not,
                // and only a classic parse can succeed for it.
                ResponseKind::Script { maybe_module }
            } else {
                ResponseKind::Script {
                    maybe_module: false,
                }
            }
        }
        "worker" | "sharedworker" | "serviceworker" => {
            if javascript {
                ResponseKind::WorkerScript
            } else {
                ResponseKind::Refused("a worker script needs a JavaScript type")
            }
        }
        // No fetch metadata (not a browser, or a very old one): trust the type.
        "" if javascript => ResponseKind::Script {
            maybe_module: false,
        },
        _ => ResponseKind::Other,
    }
}

fn is_html(essence: &str) -> bool {
    essence == "text/html" || essence == "application/xhtml+xml"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(dest: &'a str, mode: &'a str) -> FetchContext<'a> {
        FetchContext { dest, mode }
    }

    #[test]
    fn classifies_like_chromium() {
        use ResponseKind::*;
        let classic = Script {
            maybe_module: false,
        };
        let cors = Script { maybe_module: true };
        let cases: &[(&str, bool, &str, &str, ResponseKind)] = &[
            (
                "text/html; charset=utf-8",
                false,
                "document",
                "navigate",
                Document,
            ),
            (
                "application/xhtml+xml",
                false,
                "iframe",
                "navigate",
                Document,
            ),
            ("text/html", false, "", "", Document),
            // HTML fetched by XHR/fetch stays as it is.
            ("text/html", false, "empty", "cors", Other),
            ("text/javascript", false, "script", "no-cors", classic),
            (
                "application/x-javascript",
                false,
                "script",
                "no-cors",
                classic,
            ),
            ("text/x-javascript", false, "script", "no-cors", classic),
            ("text/jscript", false, "script", "no-cors", classic),
            (
                "Application/JavaScript; charset=utf-8",
                false,
                "script",
                "no-cors",
                classic,
            ),
            ("text/javascript", false, "script", "cors", cors),
            // Chromium runs classic scripts served with other types unless nosniff.
            ("text/plain", false, "script", "no-cors", classic),
            (
                "application/octet-stream",
                false,
                "script",
                "no-cors",
                classic,
            ),
            ("", false, "script", "no-cors", classic),
            (
                "text/plain",
                true,
                "script",
                "no-cors",
                Refused("nosniff with a non-JavaScript type"),
            ),
            (
                "image/gif",
                false,
                "script",
                "no-cors",
                Refused("the browser never runs this type as a script"),
            ),
            (
                "text/csv",
                false,
                "script",
                "no-cors",
                Refused("the browser never runs this type as a script"),
            ),
            ("text/javascript", true, "script", "no-cors", classic),
            (
                "text/javascript",
                false,
                "worker",
                "same-origin",
                WorkerScript,
            ),
            (
                "text/javascript",
                false,
                "serviceworker",
                "same-origin",
                WorkerScript,
            ),
            (
                "text/plain",
                false,
                "worker",
                "same-origin",
                Refused("a worker script needs a JavaScript type"),
            ),
            ("application/javascript", false, "", "", classic),
            ("application/json", false, "", "", Other),
            ("application/javascript", false, "empty", "cors", Other),
            ("text/css", false, "style", "no-cors", Other),
        ];
        for (ct, nosniff, dest, mode, want) in cases {
            assert_eq!(
                classify(ct, *nosniff, ctx(dest, mode)),
                *want,
                "{ct:?} nosniff={nosniff} dest={dest:?} mode={mode:?}"
            );
        }
        assert!(is_javascript_mime("text/livescript"));
        assert!(!is_javascript_mime("module"));
        assert!(!is_javascript_mime("text/plain"));
    }
}
