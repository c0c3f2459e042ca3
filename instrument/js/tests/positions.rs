//! A position in the instrumented code maps back to the source text it was made from: what a
//! report needs to show the line an uncaught exception came from.

use shepherd_instrument_js::{Kind, Options, instrument, original_position};

/// 1-based line and column (UTF-16 units; the texts here are ASCII) of `needle` in `text`.
fn find(text: &str, needle: &str) -> (u32, u32) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} in {text}"));
    let line = text[..at].matches('\n').count() as u32 + 1;
    let col = (at - text[..at].rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
    (line, col)
}

#[test]
fn positions_of_the_instrumented_code_map_back_to_the_source() {
    let src = "var thumbs = [];\nfunction del(pos) {\n  var id = thumbs[pos].id;\n  throw new Error('gone ' + id);\n}\nthumbs.push({ id: 1 });\n";
    let opts = Options::new(Kind::Script, "gallery.js");
    let out = instrument(src, &opts).unwrap_or_else(|e| panic!("{e}"));
    // The instrumented code is laid out otherwise: the throw is elsewhere in it.
    let (gl, gc) = find(&out.code, "throw new(");
    let (sl, sc) = find(src, "throw new Error");
    assert_ne!((gl, gc), (sl, sc), "{}", out.code);
    assert_eq!(original_position(src, &opts, gl, gc), Some((sl, sc)));
    let (gl, gc) = find(&out.code, "\"gone \"");
    assert_eq!(
        original_position(src, &opts, gl, gc),
        Some(find(src, "'gone '"))
    );
    // Nothing before the first mapping, and no position in a refused source.
    assert_eq!(original_position("var = ;", &opts, 1, 1), None);
    // Nothing past the code the pass made (another script's position is not this one's).
    let lines = out.code.split('\n').count() as u32;
    assert_eq!(original_position(src, &opts, lines + 1, 1), None);
    let last = out
        .code
        .split('\n')
        .nth(gl as usize - 1)
        .map_or(0, str::len) as u32;
    assert_eq!(original_position(src, &opts, gl, last + 2), None);
}
