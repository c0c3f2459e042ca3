//! Event names: how one schedulable event is called in every execution, so the explorer can
//! ask for "the same" event again.
//!
//! | name | event |
//! |---|---|
//! | `chunk:<url>#<k>` | part `k` of an HTML document split before each `<script>` (held at the proxy) |
//! | `net:<url>#<n>` | the `n`th response for `url` in this execution (held at the proxy) |
//! | `cb:<stable id>` | a callback held by the page's controller (timer, event dispatch, settlement…) |
//! | `user:<k>` | gesture `k` of the recording |
//!
//! Names that differ only in volatile parts (timestamps, session ids, nonces in URLs) are
//! matched fuzzily when the exact name is not enabled.

/// Kinds of actions the explorer schedules through the controller's decider: everything it
/// can hold except `pagereveal` (fired when the browser first renders) and network `progress`
/// events (throttled by the browser), which the explorer lets run whenever they come, and the
/// events of leaving the page (the recording ended by navigating away; an execution does not).
pub fn held_kind(kind: &str) -> bool {
    !matches!(
        kind,
        "parse"
            | "script"
            | "task"
            | "continuation"
            | "event:pagereveal"
            | "event:progress"
            | "event:pageswap"
            | "event:pagehide"
            | "event:beforeunload"
            | "event:unload"
            | "event:visibilitychange"
            | ""
    )
}

/// A held callback.
pub fn callback(stable: &str) -> String {
    format!("cb:{stable}")
}

/// Gesture `k`.
pub fn user(k: usize) -> String {
    format!("user:{k}")
}

/// The gesture index of a `user:` name.
pub fn user_index(name: &str) -> Option<usize> {
    name.strip_prefix("user:")?.parse().ok()
}

/// Whether an event can show up a while after what enabled it ran: network arrival, parsing,
/// events the browser dispatches. Timers, interval ticks, frames and idle callbacks are held
/// when registered (virtual time), so they are there as soon as their creator's step is.
pub fn appears_late(name: &str) -> bool {
    let last = name.rsplit('/').next().unwrap_or(name);
    !["timer#", "interval#", "tick#", "raf#", "idle#"]
        .iter()
        .any(|p| last.starts_with(p))
}

/// Part `k` of document `url`.
pub fn chunk(url: &str, k: usize) -> String {
    format!("chunk:{url}#{k}")
}

/// The `n`th response for `url`.
pub fn net(url: &str, n: usize) -> String {
    format!("net:{url}#{n}")
}

/// A user event (never reordered with other user events).
pub fn is_user(name: &str) -> bool {
    name.starts_with("user:")
}

/// Network arrival or parsing progress (what the initial execution releases as needed).
pub fn is_loading(name: &str) -> bool {
    name.starts_with("chunk:") || name.starts_with("net:")
}

/// The name with volatile parts blanked: digit runs of five or more (timestamps, ids) and
/// hexadecimal or base64-like tokens of 16 characters or more (session ids, nonces).
pub fn fuzzy(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b'_') {
                i += 1;
            }
            let tok = &name[start..i];
            let digits = tok.bytes().filter(u8::is_ascii_digit).count();
            if tok.len() >= 5 && digits == tok.len() {
                out.push('#');
            } else if tok.len() >= 16 && digits > 0 {
                out.push('*');
            } else {
                out.push_str(tok);
            }
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

/// The enabled event that stands for `want`: itself, or the only enabled event of the same
/// fuzzy name.
pub fn find<'a>(enabled: &'a [String], want: &str) -> Option<&'a String> {
    if let Some(e) = enabled.iter().find(|e| *e == want) {
        return Some(e);
    }
    let key = fuzzy(want);
    let mut hits = enabled.iter().filter(|e| fuzzy(e) == key);
    let first = hits.next()?;
    hits.next().is_none().then_some(first)
}

/// A name from the recording, where the document arrived in one piece, matched in a replay,
/// where it arrives in chunks: the parser's deliveries are numbered differently (`parse#3` in
/// the recording may be `parse#5` here), so their ordinals are blanked too. The candidates,
/// in `enabled`'s order.
pub fn find_recorded<'a>(enabled: &'a [String], want: &str) -> Vec<&'a String> {
    if let Some(e) = find(enabled, want) {
        return vec![e];
    }
    let key = blank_parse(&fuzzy(want));
    enabled
        .iter()
        .filter(|e| blank_parse(&fuzzy(e)) == key)
        .collect()
}

fn blank_parse(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find("/parse#") {
        out.push_str(&rest[..i + "/parse#".len()]);
        rest = rest[i + "/parse#".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('*');
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzy_names_ignore_volatile_parts() {
        assert_eq!(
            fuzzy("net:https://a.test/api?t=1700000000000&sid=abc#1"),
            "net:https://a.test/api?t=#&sid=abc#1"
        );
        assert_eq!(
            fuzzy("cb:doc/xhr@/s?token=9f8e7d6c5b4a39281706#2"),
            "cb:doc/xhr@/s?token=*#2"
        );
        let enabled = vec![
            "net:https://a.test/api?t=1700000001234&sid=abc#1".to_string(),
            "cb:doc/timer#1".to_string(),
        ];
        assert_eq!(
            find(&enabled, "net:https://a.test/api?t=1700000000000&sid=abc#1"),
            Some(&enabled[0])
        );
        assert_eq!(find(&enabled, "cb:doc/timer#2"), None);
        assert_eq!(find(&enabled, "cb:doc/timer#1"), Some(&enabled[1]));
        assert_eq!(user_index("user:3"), Some(3));
        let parsed = vec!["cb:doc/parse#12/event:load#1".to_string()];
        assert_eq!(
            find_recorded(&parsed, "cb:doc/parse#10/event:load#1"),
            vec![&parsed[0]]
        );
        assert!(held_kind("timer") && !held_kind("parse"));
        assert!(!appears_late("cb:doc/event:blur@#a#1/raf#1"));
        assert!(appears_late("cb:doc/event:load@window#1"));
    }
}
