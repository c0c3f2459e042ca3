//! Parser gates in the document as the rewriter streams it (repair mode): what is marked with
//! the document's hold token, what gets a hold point, and what is left alone.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_instrument::{HtmlConfig, HtmlGates, Mode, instrument_html};
use std::sync::Arc;
const T: &str = "0123456789abcdef0123456789abcdef";

fn gated(html: &str, scripts: bool, inline: bool, images: bool) -> String {
    let mut cfg = HtmlConfig::new(Mode::Repair, "tok");
    cfg.gates = Some(HtmlGates {
        token: T.into(),
        scripts,
        inline_scripts: inline,
        images,
        hold_point: Arc::new(|n| format!("<HOLD {n}>")),
    });
    let (out, _, _) = instrument_html(html.as_bytes(), cfg, &[]).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn marks_the_parsers_scripts_and_images() {
    let html = concat!(
        "<!doctype html><html><head><script src=\"a.js?v=1&amp;x=2#f\"></script>",
        "<script async src=b.js></script><script>boot()</script>",
        "<script type=module>m()</script><script type=text/template><p></script>",
        "<template><script>t()</script><img src=t.png></template>",
        "<noscript><script>n()</script></noscript>",
        "</head><body><img src=\"i.png\" srcset=\"i1.png 1x, i2.png?q 2x\">",
        "<img loading=lazy src=l.png><svg><script>s()</script></svg>",
        "<script nomodule src=old.js></script></body></html>"
    );
    let out = gated(html, true, true, true);
    assert!(
        out.contains(&format!(
            "src=\"a.js?v=1&amp;x=2&amp;__shepherd_hold={T}.1#f\""
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("src=\"b.js?__shepherd_hold={T}.2\"")),
        "{out}"
    );
    assert!(
        out.contains("<script __shepherd_hold=\"3\"><HOLD 3>boot()</script>"),
        "{out}"
    );
    assert!(out.contains("<script type=module>m()</script>"), "{out}");
    assert!(
        out.contains("<script type=text/template><p></script>"),
        "{out}"
    );
    assert!(
        out.contains("<template><script>t()</script><img src=t.png></template>"),
        "{out}"
    );
    assert!(
        out.contains("<noscript><script>n()</script></noscript>"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "src=\"i.png?__shepherd_hold={T}.4\" srcset=\"i1.png?__shepherd_hold={T}.4 1x, i2.png?q&amp;__shepherd_hold={T}.4 2x\""
        )),
        "{out}"
    );
    assert!(out.contains("<img loading=lazy src=l.png>"), "{out}");
    assert!(out.contains("<svg><script>s()</script></svg>"), "{out}");
    assert!(out.contains("<script nomodule src=old.js>"), "{out}");
    // The runtime learns the token from its URL's fragment.
    assert!(out.contains(&format!("m=repair#g={T}\"")), "{out}");
}

#[test]
fn only_what_the_policy_may_postpone() {
    let html = "<script src=a.js></script><script>x()</script><img src=i.png>";
    let out = gated(html, false, true, false);
    assert!(out.contains("<script src=a.js>"), "{out}");
    assert!(out.contains("<HOLD 1>x()"), "{out}");
    assert!(out.contains("<img src=i.png>"), "{out}");
    let out = gated(html, true, false, false);
    assert!(out.contains("<script>x()</script>"), "{out}");
}

#[test]
fn modules_and_urls_the_proxy_never_sees_keep_their_urls() {
    let html = concat!(
        "<script type=module src=app.js></script><script type=\" Module \" src=b.js></script>",
        "<script src=\"DATA:text/javascript,go()\"></script><script src=\"Blob:x\"></script>",
        "<script src=\"javascript:void 0\"></script><img src=\"about:blank\">",
        "<script src=\"HTTPS://cdn.test/c.js\"></script><script src=\"//cdn.test/d.js\"></script>",
        "<script src=\"./e:f.js\"></script>"
    );
    let out = gated(html, true, true, true);
    for kept in [
        "<script type=module src=app.js>",
        "<script type=\" Module \" src=b.js>",
        "src=\"DATA:text/javascript,go()\"",
        "src=\"Blob:x\"",
        "src=\"javascript:void 0\"",
        "<img src=\"about:blank\">",
    ] {
        assert!(out.contains(kept), "{kept} unchanged: {out}");
    }
    for (url, n) in [
        ("HTTPS://cdn.test/c.js", 1),
        ("//cdn.test/d.js", 2),
        ("./e:f.js", 3),
    ] {
        assert!(
            out.contains(&format!("src=\"{url}?__shepherd_hold={T}.{n}\"")),
            "{url} marked {n}: {out}"
        );
    }
}
