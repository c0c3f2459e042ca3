//! Fragment mode (`HtmlConfig::fragment`): markup from `document.write` / `innerHTML`,
//! instrumented at run time through the proxy's `html` kind of the instrument endpoint.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use shepherd_instrument::{Mode, instrument_html};

fn fragment(input: &str, mode: Mode) -> String {
    let mut cfg = common::config(mode);
    cfg.fragment = true;
    let (out, _, _) = instrument_html(input.as_bytes(), cfg, &[]).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn scripts_and_handlers_instrumented_nothing_injected() {
    let input = "<script>x = 1;</script><b onclick=\"go(&quot;a&quot;)\">b</b>\
                 <a href=\"javascript:run()\">a</a>";
    let out = fragment(input, Mode::Record);
    assert_eq!(
        out,
        "<script>/*i:script*/x = 1;</script><b onclick=\"/*i:handler*/go(&quot;a&quot;)\">b</b>\
         <a href=\"javascript:/*i:js-url*/run()\">a</a>"
    );
    assert!(!out.contains("__shepherd/runtime.js"), "{out}");
}

#[test]
fn plain_markup_unchanged_and_short_input_handled() {
    for input in ["", "x", "<b>plain</b> text", "<p class=a>é ü 漢</p>"] {
        assert_eq!(fragment(input, Mode::Record), input);
    }
}

#[test]
fn script_without_end_tag_kept() {
    // `document.write('<script>x = 1')` then `document.write('+2</script>')`: instrumenting
    // the first half alone would change what the whole script means.
    assert_eq!(
        fragment("<p>a</p><script>x = 1", Mode::Record),
        "<p>a</p><script>x = 1"
    );
    assert_eq!(fragment("+2</script><p>", Mode::Record), "+2</script><p>");
}

#[test]
fn meta_charset_and_srcdoc_ignored() {
    let input = "<meta charset=\"windows-1252\"><i>é</i><iframe srcdoc=\"<p>x</p>\"></iframe>";
    assert_eq!(fragment(input, Mode::Record), input);
}

#[test]
fn repair_mode_changes_nothing() {
    let input = "<script>x = 1;</script><b onclick=\"go()\">b</b>";
    assert_eq!(fragment(input, Mode::Repair), input);
}
