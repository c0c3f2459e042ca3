//! Action kinds: the finer kind of an action (`KIND` of a `b` record, `docs/trace-format.md`;
//! the list is the runtime's, `docs/runtime-api.md`). The trace keeps the interned string, so
//! the format and kinds a newer runtime adds pass through unchanged; code that asks what an
//! action is matches on [`ActionKind`] instead of comparing strings, so a misspelt kind is a
//! compile error rather than a silent mismatch.

use std::fmt;

/// What an action is, as the runtime labels it. Borrows the trace's string for the parts
/// that vary (the DOM event type, the observer, an unknown kind), so reading the kind of
/// every action of a long trace allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionKind<'a> {
    /// A parser delivery (`parse`).
    Parse,
    /// A script's execution (`script`), parser-inserted, inserted by the page or a worker's.
    Script,
    /// A host task the runtime does not wrap (`task`).
    Task,
    /// A promise reaction or an `await` resumed with nothing open (`continuation`).
    Continuation,
    /// Code of a `javascript:` URL (`javascript-url`).
    JavascriptUrl,
    /// A DOM event dispatch (`event:<type>`), with its type.
    Event(&'a str),
    /// A `setTimeout` callback (`timer`).
    Timer,
    /// A `setInterval` tick (`interval`).
    Interval,
    /// A `requestAnimationFrame` callback (`raf`).
    AnimationFrame,
    /// A `requestIdleCallback` callback (`idle`).
    IdleCallback,
    /// An `XMLHttpRequest` callback as the page's controller holds it (`xhr`).
    Xhr,
    /// The settlement of a `fetch` (`fetch`).
    Fetch,
    /// The settlement of a response body read (`body`).
    Body,
    /// A WebSocket callback as the page's controller holds it (`websocket`).
    WebSocket,
    /// A `MessagePort` or worker message (`message`).
    Message,
    /// An observer's callback (`observer:<which>`: `mutation`, `intersection`, `resize`,
    /// `performance`).
    Observer(&'a str),
    /// A kind this crate does not know (a newer runtime's, an imported trace's scope label,
    /// or the empty string), kept as written.
    Other(&'a str),
}

impl<'a> ActionKind<'a> {
    /// The kind a trace's `KIND` string names; never fails (unknown kinds are
    /// [`Other`](ActionKind::Other)).
    pub fn parse(s: &'a str) -> ActionKind<'a> {
        if let Some(t) = s.strip_prefix("event:") {
            return ActionKind::Event(t);
        }
        if let Some(o) = s.strip_prefix("observer:") {
            return ActionKind::Observer(o);
        }
        match s {
            "parse" => ActionKind::Parse,
            "script" => ActionKind::Script,
            "task" => ActionKind::Task,
            "continuation" => ActionKind::Continuation,
            "javascript-url" => ActionKind::JavascriptUrl,
            "timer" => ActionKind::Timer,
            "interval" => ActionKind::Interval,
            "raf" => ActionKind::AnimationFrame,
            "idle" => ActionKind::IdleCallback,
            "xhr" => ActionKind::Xhr,
            "fetch" => ActionKind::Fetch,
            "body" => ActionKind::Body,
            "websocket" => ActionKind::WebSocket,
            "message" => ActionKind::Message,
            other => ActionKind::Other(other),
        }
    }

    /// The DOM event type of an `event:<type>` action.
    pub fn event_type(self) -> Option<&'a str> {
        match self {
            ActionKind::Event(t) => Some(t),
            _ => None,
        }
    }

    /// Timer-like callbacks: timeouts, interval ticks, animation frames, idle callbacks (what
    /// virtual time holds when they are registered).
    pub fn is_timer_like(self) -> bool {
        matches!(
            self,
            ActionKind::Timer
                | ActionKind::Interval
                | ActionKind::AnimationFrame
                | ActionKind::IdleCallback
        )
    }
}

impl<'a> From<&'a str> for ActionKind<'a> {
    fn from(s: &'a str) -> ActionKind<'a> {
        ActionKind::parse(s)
    }
}

/// The string the trace holds: `parse(k.to_string()) == k` for every kind.
impl fmt::Display for ActionKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fixed = match self {
            ActionKind::Parse => "parse",
            ActionKind::Script => "script",
            ActionKind::Task => "task",
            ActionKind::Continuation => "continuation",
            ActionKind::JavascriptUrl => "javascript-url",
            ActionKind::Timer => "timer",
            ActionKind::Interval => "interval",
            ActionKind::AnimationFrame => "raf",
            ActionKind::IdleCallback => "idle",
            ActionKind::Xhr => "xhr",
            ActionKind::Fetch => "fetch",
            ActionKind::Body => "body",
            ActionKind::WebSocket => "websocket",
            ActionKind::Message => "message",
            ActionKind::Event(t) => return write!(f, "event:{t}"),
            ActionKind::Observer(o) => return write!(f, "observer:{o}"),
            ActionKind::Other(s) => s,
        };
        f.write_str(fixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_as_written() {
        for s in [
            "parse",
            "script",
            "task",
            "continuation",
            "javascript-url",
            "event:click",
            "event:",
            "timer",
            "interval",
            "raf",
            "idle",
            "xhr",
            "fetch",
            "body",
            "websocket",
            "message",
            "observer:mutation",
            "event",
            "",
            "something-new",
        ] {
            assert_eq!(ActionKind::parse(s).to_string(), s);
        }
        assert_eq!(ActionKind::parse("event:load"), ActionKind::Event("load"));
        assert_eq!(ActionKind::parse("event:load").event_type(), Some("load"));
        // The kind synthetic user events once had: not an event of any type.
        assert_eq!(ActionKind::parse("event"), ActionKind::Other("event"));
        assert!(ActionKind::parse("raf").is_timer_like());
        assert!(!ActionKind::parse("fetch").is_timer_like());
    }

    #[test]
    fn a_trace_reads_its_actions_kinds() {
        let mut b = crate::TraceBuilder::new();
        b.begin(crate::ActionType::Timer, "timer", "t");
        b.end();
        b.begin(crate::ActionType::UserInterface, "event:click", "c");
        b.end();
        let t = b.finish();
        let kinds: Vec<_> = t.actions.iter().map(|a| t.kind_of(a)).collect();
        assert_eq!(kinds, [ActionKind::Timer, ActionKind::Event("click")]);
    }
}
