//! The control endpoints (`/__shepherd/control/*`): holds, releases, replay reset. They act on
//! the whole proxy, so a scheduler (the explorer, a test) can drive network arrival and parsing
//! order; `ProxyHandle` offers the same in-process.

use crate::body::ProxyBody;
use crate::query;
use crate::respond::{json, simple};
use crate::state::Shared;
use http::{Method, Response, StatusCode};

/// Answers `/__shepherd/control/<what>`.
pub(crate) fn handle(
    shared: &Shared,
    method: &Method,
    what: &str,
    query: &str,
) -> Response<ProxyBody> {
    let holds = &shared.holds;
    if what == "holds" && method == Method::GET {
        return json(serde_json::json!({ "held": holds.pending() }));
    }
    if what == "repair" && method == Method::GET {
        return json(serde_json::json!({ "pages": shared.repair.summary() }));
    }
    if method != Method::POST {
        return simple(
            StatusCode::METHOD_NOT_ALLOWED,
            "control endpoints take POST\n",
        );
    }
    match what {
        "hold" => {
            if let Some(p) = query::param(query, "url") {
                if p.is_empty() || p.len() > 2048 {
                    return simple(
                        StatusCode::BAD_REQUEST,
                        "url= pattern is empty or too long\n",
                    );
                }
                holds.hold_matching(&p);
            } else {
                holds.set_hold_all(query::param(query, "all").as_deref() != Some("0"));
            }
            if let Some(split) = query::param(query, "split_html") {
                holds.set_split_html(split == "1");
            }
            json(serde_json::json!({ "ok": true }))
        }
        "unhold" => {
            holds.clear_rules();
            json(serde_json::json!({ "ok": true }))
        }
        "release" => {
            if query::param(query, "all").is_some() {
                let n = holds.release_all();
                return json(serde_json::json!({ "released": n }));
            }
            match query::param(query, "id").and_then(|s| s.parse::<u64>().ok()) {
                Some(id) if holds.release(id) => json(serde_json::json!({ "released": 1 })),
                Some(_) => simple(StatusCode::NOT_FOUND, "no such hold\n"),
                None => simple(StatusCode::BAD_REQUEST, "release needs id= or all=1\n"),
            }
        }
        "reset" => {
            if shared.source.reset() {
                json(serde_json::json!({ "ok": true }))
            } else {
                simple(
                    StatusCode::CONFLICT,
                    "nothing to reset: this proxy is not replaying\n",
                )
            }
        }
        _ => simple(StatusCode::NOT_FOUND, "no such control endpoint\n"),
    }
}
