//! Source maps of rewritten scripts: the proxy replaces the page's `SourceMap`/`X-SourceMap`
//! headers with its own `/__shepherd/map/ID.map?url=...`, answers that path without the secret
//! through the rewrite hook (chained with the page's own map when the script had one), and
//! leaves the page's headers alone when it did not rewrite.

mod common;

use bytes::Bytes;
use common::*;
use shepherd_proxy::{ResponseMeta, RewriteKind, Rewriter, RewrittenScript, ScriptJob};
use std::sync::Arc;

/// Prefixes scripts with a comment and names one fixed map for them.
struct Prefixer;

impl Rewriter for Prefixer {
    fn plan(&self, _meta: &ResponseMeta<'_>, headers: &mut http::HeaderMap) -> RewriteKind {
        match headers.get("content-type").and_then(|v| v.to_str().ok()) {
            Some("application/javascript") => RewriteKind::Script { module: false },
            _ => RewriteKind::None,
        }
    }

    fn rewrite_script(&self, job: ScriptJob) -> RewrittenScript {
        let mut body = b"/*instrumented*/".to_vec();
        body.extend_from_slice(&job.source);
        RewrittenScript {
            body: Bytes::from(body),
            source_map_id: Some("0a1b2c".into()),
        }
    }

    fn source_map(&self, map_id: &str, script_url: &str) -> Option<String> {
        (map_id == "0a1b2c").then(|| {
            // Instrumented line 1 col 0 comes from the served script's line 0 col 0.
            serde_json::json!({"version": 3, "sources": [script_url], "names": [], "mappings": ";AAAA"})
                .to_string()
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewritten_scripts_point_at_the_proxys_source_map() {
    let origin = Origin::start(true, true).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let script_url = format!("https://{authority}/app.js");

    // Without a rewrite the page's own map headers stay.
    let (plain, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let mut client = Client::https(plain.addr(), &authority, &ca, &[b"h2"]).await;
    let (resp, _) = client.get(&script_url).await;
    assert_eq!(resp.headers()["sourcemap"], "app.js.map");
    assert_eq!(resp.headers()["x-sourcemap"], "app.js.map");

    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |c| {
        c.rewriter = Some(Arc::new(Prefixer));
    })
    .await;
    for alpn in [&[b"h2" as &[u8]][..], &[b"http/1.1" as &[u8]][..]] {
        let mut client = Client::https(proxy.addr(), &authority, &ca, alpn).await;
        let (resp, body) = client.get(&script_url).await;
        assert_eq!(resp.status(), 200);
        assert!(body.starts_with(b"/*instrumented*/function app()"));
        assert!(resp.headers().get("x-sourcemap").is_none());
        let header = resp.headers()["sourcemap"].to_str().unwrap().to_string();
        assert!(
            header.starts_with("/__shepherd/map/0a1b2c.map?url="),
            "{header}"
        );
        // Devtools resolve the header against the script URL and fetch it without a secret.
        let (map_resp, map) = client.get(&format!("https://{authority}{header}")).await;
        assert_eq!(map_resp.status(), 200);
        assert!(
            map_resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        assert!(header.contains("&page="), "{header}");
        // Chained with the page's own map: positions lead to the original source.
        let chained = swc_sourcemap::SourceMap::from_slice(&map).unwrap();
        assert_eq!(
            chained.get_source(0).map(|s| s.to_string()),
            Some(format!("https://{authority}/src/app.ts"))
        );
        let t = chained.lookup_token(1, 0).unwrap();
        assert_eq!((t.get_src_line(), t.get_src_col()), (5, 2));

        // A page map on another origin (here the same server under its IP, which would
        // answer) is never fetched: the path takes no secret.
        let elsewhere = format!(
            "{}&page=https%3A%2F%2F127.0.0.1%3A{}%2Fapp.js.map",
            header.split("&page=").next().unwrap(),
            origin.addr.port()
        );
        let (r, map) = client.get(&format!("https://{authority}{elsewhere}")).await;
        assert_eq!(r.status(), 200);
        let map: serde_json::Value = serde_json::from_slice(&map).unwrap();
        assert_eq!(map["sources"], serde_json::json!([script_url]));

        // A script without a map of its own: our map alone, naming the script.
        let nomap_url = format!("https://{authority}/nomap.js");
        let (resp, _) = client.get(&nomap_url).await;
        let header = resp.headers()["sourcemap"].to_str().unwrap().to_string();
        assert!(!header.contains("&page="), "{header}");
        let (_, map) = client.get(&format!("https://{authority}{header}")).await;
        let map: serde_json::Value = serde_json::from_slice(&map).unwrap();
        assert_eq!(map["version"], 3);
        assert_eq!(map["sources"], serde_json::json!([nomap_url]));

        for bad in [
            "/__shepherd/map/ffff.map",
            "/__shepherd/map/..%2Fsecret.map",
            "/__shepherd/map/0a1b2c",
        ] {
            let (r, _) = client.get(&format!("https://{authority}{bad}")).await;
            assert_eq!(r.status(), 404, "{bad}");
        }
    }
}
