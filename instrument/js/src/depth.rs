//! A cheap pre-check of bracket nesting, so pathological input is rejected before the
//! recursive parser, visitors and emitter see it.

/// True when `src` nests `(`, `[` or `{` deeper than `limit`. Strings, template text and
/// comments are skipped roughly; regex literals are not recognised, which can only
/// over-count brackets inside them (the source is then served uninstrumented).
pub(crate) fn too_deep(src: &str, limit: usize) -> bool {
    let b = src.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            q @ (b'"' | b'\'' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    } else if q != b'`' && b[i] == b'\n' {
                        break;
                    }
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    false
}
