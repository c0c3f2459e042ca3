//! The vocabulary of events a policy can name: built-in kinds and DOM event types. The runtime
//! gets the user-input list from the compiled policy, so the two sides cannot disagree.

use shepherd_trace::ActionKind;

/// Direct user input: the events `user` matches, discarded or postponed as a whole gesture
/// (mousedown → focus → mouseup → click; keydown → keypress → input → keyup).
pub const USER_TYPES: &[&str] = &[
    "click",
    "dblclick",
    "auxclick",
    "contextmenu",
    "mousedown",
    "mouseup",
    "pointerdown",
    "pointerup",
    "keydown",
    "keypress",
    "keyup",
    "beforeinput",
    "input",
    "change",
    "submit",
    "reset",
    "touchstart",
    "touchend",
    "touchcancel",
    "paste",
    "cut",
    "copy",
    "drop",
    "compositionstart",
    "compositionupdate",
    "compositionend",
];

/// Indirect input (hovering, scrolling, focus moves): user events that `user` does not match,
/// since holding them would replay stale pointer movement (name them to act on them).
pub const INDIRECT_TYPES: &[&str] = &[
    "mousemove",
    "mouseover",
    "mouseout",
    "mouseenter",
    "mouseleave",
    "pointermove",
    "pointerover",
    "pointerout",
    "pointerenter",
    "pointerleave",
    "pointercancel",
    "wheel",
    "scroll",
    "focus",
    "blur",
    "focusin",
    "focusout",
    "dragstart",
    "drag",
    "dragend",
    "dragenter",
    "dragleave",
    "dragover",
    "select",
    "selectionchange",
];

/// Other DOM event types a policy may name.
pub const SYSTEM_TYPES: &[&str] = &[
    "load",
    "error",
    "abort",
    "DOMContentLoaded",
    "readystatechange",
    "message",
    "messageerror",
    "hashchange",
    "popstate",
    "pageshow",
    "pagehide",
    "visibilitychange",
    "transitionend",
    "animationstart",
    "animationend",
    "progress",
    "loadstart",
    "loadend",
    "timeout",
    "storage",
    "online",
    "offline",
    "toggle",
    "invalid",
    "resize",
];

/// A built-in kind of event (besides DOM event types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Trusted direct user input ([`USER_TYPES`]).
    User,
    /// A `setTimeout` callback.
    Timer,
    /// A `setInterval` tick.
    Interval,
    /// A `requestAnimationFrame` callback.
    AnimationFrame,
    /// A `requestIdleCallback` callback.
    IdleCallback,
    /// The response of an `XMLHttpRequest` (its events at `readyState` 4; `state N` for others).
    Xhr,
    /// The settlement of a `fetch` or of a response body read.
    Fetch,
    /// The execution of a script the page inserted (parser-blocking scripts are never held).
    Script,
}

impl Kind {
    /// Every kind with its keyword.
    pub const ALL: [(Kind, &'static str); 8] = [
        (Kind::User, "user"),
        (Kind::Timer, "timer"),
        (Kind::Interval, "interval"),
        (Kind::AnimationFrame, "animation-frame"),
        (Kind::IdleCallback, "idle-callback"),
        (Kind::Xhr, "xhr"),
        (Kind::Fetch, "fetch"),
        (Kind::Script, "script"),
    ];

    /// The keyword.
    pub fn as_str(self) -> &'static str {
        Kind::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("?", |(_, s)| s)
    }

    /// The kind a keyword names.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.iter().find(|(_, n)| *n == s).map(|(k, _)| *k)
    }

    /// The kind of callback an action of trace kind `k` is, for the kinds a policy names by
    /// the action's kind alone (as the runtime's `forkKind` maps them): timers, interval
    /// ticks, frames, idle callbacks, `fetch` and body settlements, scripts. User input and
    /// XHR responses are told by more than the kind, so they are not among them.
    pub fn of_action(k: ActionKind<'_>) -> Option<Kind> {
        match k {
            ActionKind::Timer => Some(Kind::Timer),
            ActionKind::Interval => Some(Kind::Interval),
            ActionKind::AnimationFrame => Some(Kind::AnimationFrame),
            ActionKind::IdleCallback => Some(Kind::IdleCallback),
            ActionKind::Fetch | ActionKind::Body => Some(Kind::Fetch),
            ActionKind::Script => Some(Kind::Script),
            _ => None,
        }
    }

    /// Whether the page creates these events (so `on fork` can see them being created).
    pub fn forkable(self) -> bool {
        !matches!(self, Kind::User)
    }

    /// In words, for explanations.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::User => "user input (clicks, keys, touches, form input)",
            Kind::Timer => "timer callbacks (setTimeout)",
            Kind::Interval => "interval ticks (setInterval)",
            Kind::AnimationFrame => "animation frames",
            Kind::IdleCallback => "idle callbacks",
            Kind::Xhr => "XMLHttpRequest responses",
            Kind::Fetch => "fetch responses",
            Kind::Script => "executions of scripts the page inserts",
        }
    }
}

/// Whether `t` is a DOM event type the language knows.
pub fn known_type(t: &str) -> bool {
    USER_TYPES.contains(&t) || INDIRECT_TYPES.contains(&t) || SYSTEM_TYPES.contains(&t)
}

/// Whether events of type `t` are user input (direct or indirect), the only ones that may be
/// discarded.
pub fn input_type(t: &str) -> bool {
    USER_TYPES.contains(&t) || INDIRECT_TYPES.contains(&t)
}

/// DOM event types the page creates: `load`/`error` of images and iframes whose `src` a
/// script sets.
pub fn forkable_type(t: &str) -> bool {
    matches!(t, "load" | "error")
}

/// Every name a term may start with, for "did you mean" hints.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    Kind::ALL
        .iter()
        .map(|(_, n)| *n)
        .chain(USER_TYPES.iter().copied())
        .chain(INDIRECT_TYPES.iter().copied())
        .chain(SYSTEM_TYPES.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_kinds_a_policy_names() {
        assert_eq!(
            Kind::of_action(ActionKind::parse("raf")),
            Some(Kind::AnimationFrame)
        );
        assert_eq!(
            Kind::of_action(ActionKind::parse("body")),
            Some(Kind::Fetch)
        );
        assert_eq!(Kind::of_action(ActionKind::parse("event:click")), None);
        assert_eq!(Kind::of_action(ActionKind::parse("xhr")), None);
    }
}
