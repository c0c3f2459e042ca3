//! Shared helpers of the integration tests: a predictable stand-in for the JS pass and a
//! fixed configuration, so fixtures pin down exactly what the HTML layer does.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use shepherd_instrument::{Flags, HtmlConfig, Mode, ScriptCache, ScriptKind};
use std::sync::Arc;

/// Stand-in pass: prefixes `/*i:KIND*/`, rejects sources containing `SYNTAX ERROR`, honours
/// `ascii_only` and `inline_script` like the real pass.
pub fn stub_pass(
    src: &str,
    kind: ScriptKind,
    flags: Flags,
    _name: &str,
) -> Result<(String, Option<String>), String> {
    if src.contains("SYNTAX ERROR") {
        return Err("stub: syntax error".into());
    }
    let mut body = String::new();
    for c in src.chars() {
        if flags.ascii_only && !c.is_ascii() {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                body.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            body.push(c);
        }
    }
    if flags.inline_script {
        body = body
            .replace("</script", "<\\/script")
            .replace("<!--", "<\\!--");
    }
    Ok((format!("/*i:{}*/{}", kind.as_str(), body), None))
}

/// Fixed configuration for `mode` with the stub pass.
pub fn config(mode: Mode) -> HtmlConfig {
    let mut cfg = HtmlConfig::new(mode, "TOKEN");
    cfg.origin = Some("https://example.test".into());
    cfg.nonce = Some("NONCE".into());
    cfg.cache = Some(Arc::new(
        ScriptCache::with_pass(mode, 1 << 20, None, stub_pass).unwrap(),
    ));
    cfg
}
