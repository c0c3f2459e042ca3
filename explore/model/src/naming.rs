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
//! [`EventName`] is the type of a name; its `Display` and `FromStr` are the only code that
//! knows the prefixes. Names are kept and exchanged as strings (the event table, the state
//! directory, the report), and parsed where they are inspected.
//!
//! Names that differ only in volatile parts (timestamps, session ids, nonces in URLs) are
//! matched fuzzily when the exact name is not enabled.

use shepherd_trace::ActionKind;
use std::fmt;
use std::str::FromStr;

/// One schedulable event. Its string form ([`Display`](fmt::Display), read back by
/// [`FromStr`]) is what the explorer's state, the controller protocol and the report hold.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventName {
    /// Part `part` of the HTML document at `url`, split before each `<script>`
    /// (`chunk:<url>#<part>`).
    Chunk {
        /// The document.
        url: String,
        /// Its part, from 0.
        part: usize,
    },
    /// The `nth` response for `url` in this execution, from 1 (`net:<url>#<nth>`).
    Net {
        /// The resource.
        url: String,
        /// Which of its responses.
        nth: usize,
    },
    /// A callback held by the page's controller, by its stable id (`cb:<stable>`).
    Callback(String),
    /// Gesture `k` of the recording (`user:<k>`).
    User(usize),
}

/// Why a string is not an event name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an event name (chunk:URL#K, net:URL#N, cb:STABLE or user:K): {0:?}")]
pub struct NameError(pub String);

impl EventName {
    /// A user event (never reordered with other user events).
    pub fn is_user(&self) -> bool {
        matches!(self, EventName::User(_))
    }

    /// Network arrival or parsing progress (what the initial execution releases as needed).
    pub fn is_loading(&self) -> bool {
        matches!(self, EventName::Chunk { .. } | EventName::Net { .. })
    }

    /// Whether the event can show up a while after what enabled it ran: network arrival,
    /// parsing, events the browser dispatches. Timers, interval ticks, frames and idle
    /// callbacks are held when registered (virtual time), so they are there as soon as their
    /// creator's step is.
    pub fn appears_late(&self) -> bool {
        match self {
            EventName::Callback(stable) => {
                let last = stable.rsplit('/').next().unwrap_or(stable);
                !["timer#", "interval#", "tick#", "raf#", "idle#"]
                    .iter()
                    .any(|p| last.starts_with(p))
            }
            _ => true,
        }
    }
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventName::Chunk { url, part } => write!(f, "chunk:{url}#{part}"),
            EventName::Net { url, nth } => write!(f, "net:{url}#{nth}"),
            EventName::Callback(stable) => write!(f, "cb:{stable}"),
            EventName::User(k) => write!(f, "user:{k}"),
        }
    }
}

impl FromStr for EventName {
    type Err = NameError;

    fn from_str(s: &str) -> Result<EventName, NameError> {
        let bad = || NameError(s.to_string());
        // `<url>#<n>`: the number after the last `#` (a URL held at the proxy has no fragment).
        let numbered = |rest: &str| -> Option<(String, usize)> {
            let (url, n) = rest.rsplit_once('#')?;
            Some((url.to_string(), n.parse().ok()?))
        };
        let (prefix, rest) = s.split_once(':').ok_or_else(bad)?;
        match prefix {
            "chunk" => numbered(rest)
                .map(|(url, part)| EventName::Chunk { url, part })
                .ok_or_else(bad),
            "net" => numbered(rest)
                .map(|(url, nth)| EventName::Net { url, nth })
                .ok_or_else(bad),
            "cb" => Ok(EventName::Callback(rest.to_string())),
            "user" => rest.parse().map(EventName::User).map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

/// Whether `name` is a user event's.
pub fn is_user(name: &str) -> bool {
    name.parse::<EventName>().is_ok_and(|n| n.is_user())
}

/// Whether `name` is network arrival or parsing progress.
pub fn is_loading(name: &str) -> bool {
    name.parse::<EventName>().is_ok_and(|n| n.is_loading())
}

/// Whether `name` is a part of a document (parsing progress).
pub fn is_chunk(name: &str) -> bool {
    matches!(name.parse::<EventName>(), Ok(EventName::Chunk { .. }))
}

/// Kinds of actions the explorer schedules through the controller's decider: everything it
/// can hold except `pagereveal` (fired when the browser first renders) and network `progress`
/// events (throttled by the browser), which the explorer lets run whenever they come, and the
/// events of leaving the page (the recording ended by navigating away; an execution does not).
pub fn held_kind(kind: ActionKind<'_>) -> bool {
    !matches!(
        kind,
        ActionKind::Parse
            | ActionKind::Script
            | ActionKind::Task
            | ActionKind::Continuation
            | ActionKind::Event(
                "pagereveal"
                    | "progress"
                    | "pageswap"
                    | "pagehide"
                    | "beforeunload"
                    | "unload"
                    | "visibilitychange"
            )
            | ActionKind::Other("")
    )
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

/// `name` with the parser's delivery ordinals blanked (`/parse#3/` → `/parse#*/`): the key
/// under which a recorded stable id or event name is looked up in a replay that delivered the
/// document in other pieces.
pub fn blank_parse(name: &str) -> String {
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
    fn names_read_back_as_written() {
        let names = [
            EventName::Chunk {
                url: "https://a.test/p?q=1".into(),
                part: 2,
            },
            EventName::Net {
                url: "https://a.test/api#x".into(),
                nth: 1,
            },
            EventName::Callback("doc/script#1/timer#1~7".into()),
            EventName::User(4),
        ];
        let text: Vec<String> = names.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "chunk:https://a.test/p?q=1#2",
                "net:https://a.test/api#x#1",
                "cb:doc/script#1/timer#1~7",
                "user:4"
            ]
        );
        for (n, t) in names.iter().zip(&text) {
            assert_eq!(t.parse::<EventName>().as_ref(), Ok(n));
        }
        for bad in [
            "user:x",
            "chunk:https://a.test/",
            "net:u#",
            "timer#1",
            "x:y",
        ] {
            assert!(bad.parse::<EventName>().is_err(), "{bad}");
        }
        assert!(is_user("user:0") && !is_user("cb:user:0"));
        assert!(is_loading("net:u#1") && is_loading("chunk:u#0") && !is_loading("user:1"));
    }

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
        assert_eq!("user:3".parse(), Ok(EventName::User(3)));
        let parsed = vec!["cb:doc/parse#12/event:load#1".to_string()];
        assert_eq!(
            find_recorded(&parsed, "cb:doc/parse#10/event:load#1"),
            vec![&parsed[0]]
        );
        assert!(held_kind(ActionKind::Timer) && !held_kind(ActionKind::Parse));
        assert!(!held_kind(ActionKind::parse("event:pagehide")));
        assert!(held_kind(ActionKind::parse("event:click")));
        assert!(!held_kind(ActionKind::parse("")));
        let late = |n: &str| n.parse::<EventName>().is_ok_and(|n| n.appears_late());
        assert!(!late("cb:doc/event:blur@#a#1/raf#1"));
        assert!(late("cb:doc/event:load@window#1"));
        // A response for a URL whose last segment looks like a timer's is still network.
        assert!(late("net:https://a.test/api/tick#1"));
    }
}
