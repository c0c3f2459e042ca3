//! Differential test of the injection point: the crate's own small tokenizer must pick the
//! same place as lol_html's full tokenizer would (first `<head>` → after its start tag, first
//! other element except a leading `<html>` → before it), on random token soups.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use lol_html::html_content::Element;
use lol_html::{HtmlRewriter, Settings, element};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shepherd_instrument::{HtmlConfig, Mode, instrument_html};
use std::cell::RefCell;

const TOKENS: &[&str] = &[
    "<",
    ">",
    "</",
    "<!",
    "<!--",
    "-->",
    "--!>",
    "<?",
    "<!DOCTYPE html>",
    "<!doctype",
    "<html>",
    "<HTML lang=en>",
    "<head>",
    "<HEAD a='>'>",
    "<head/>",
    "<p>",
    "<h1>",
    "<hea",
    "<htm",
    "html",
    "head",
    " ",
    "\n",
    "'",
    "\"",
    "=",
    "a",
    "/",
    "-",
    "<svg>",
    "x",
    "</p>",
    "<b c=\"<p>\">",
    "<!-->",
    "<!--->",
    "<![CDATA[",
    "]]>",
    "&lt;",
    "<meta charset=utf-8>",
];

const TAG: &str = "<script src=\"/__shepherd/runtime.js?t=S&amp;m=repair\"></script>";

/// Where lol_html says the runtime goes (byte offset), or None when it sees no element.
fn reference(doc: &str) -> Option<usize> {
    let found: RefCell<Option<usize>> = RefCell::new(None);
    let seen_html = RefCell::new(false);
    {
        let mut rw = HtmlRewriter::new(
            Settings::new()
                .with_strict(false)
                .append_element_content_handler(element!("*", |el: &mut Element<'_, '_>| {
                    if found.borrow().is_some() {
                        return Ok(());
                    }
                    let name = el.tag_name();
                    let loc = el.source_location().bytes();
                    if name == "html" && !*seen_html.borrow() {
                        *seen_html.borrow_mut() = true;
                    } else if name == "head" {
                        *found.borrow_mut() = Some(loc.end);
                    } else {
                        *found.borrow_mut() = Some(loc.start);
                    }
                    Ok(())
                })),
            |_: &[u8]| {},
        );
        rw.write(doc.as_bytes()).unwrap();
        rw.end().unwrap();
    }
    found.into_inner()
}

#[test]
fn scanner_agrees_with_lol_html() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut checked = 0;
    for _ in 0..3000 {
        let n = rng.random_range(1..10);
        let mut doc = String::new();
        for _ in 0..n {
            doc.push_str(TOKENS[rng.random_range(0..TOKENS.len())]);
        }
        if rng.random_bool(0.5) {
            doc.push_str("<p>");
        }
        let Some(want) = reference(&doc) else {
            continue;
        };
        let mut cfg = HtmlConfig::new(Mode::Repair, "S");
        cfg.content_type = Some("text/html; charset=utf-8".into());
        let (out, _, _) = instrument_html(doc.as_bytes(), cfg, &[]).unwrap();
        let out = String::from_utf8(out).unwrap();
        let got = out.find(TAG).unwrap_or_else(|| panic!("no tag in {out:?}"));
        assert_eq!(got, want, "injection point differs for {doc:?}: {out:?}");
        checked += 1;
    }
    assert!(checked > 1000, "only {checked} documents had an element");
}
