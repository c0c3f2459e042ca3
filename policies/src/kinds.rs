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
    /// The execution of an external script (`src`): parser-blocking, `async`, `defer`, or
    /// one the page's code inserted or wrote with `document.write` (filters tell them apart,
    /// [`Loading`]).
    Script,
    /// The execution of an inline classic script the parser runs (`<script>…</script>` in
    /// the document).
    InlineScript,
    /// The load (or error) of an image: `<img>` elements, the parser's and the page's.
    Img,
    /// The load (or error) of an iframe.
    Iframe,
}

impl Kind {
    /// Every kind with its keyword.
    pub const ALL: [(Kind, &'static str); 11] = [
        (Kind::User, "user"),
        (Kind::Timer, "timer"),
        (Kind::Interval, "interval"),
        (Kind::AnimationFrame, "animation-frame"),
        (Kind::IdleCallback, "idle-callback"),
        (Kind::Xhr, "xhr"),
        (Kind::Fetch, "fetch"),
        (Kind::Script, "script"),
        (Kind::InlineScript, "inline-script"),
        (Kind::Img, "img"),
        (Kind::Iframe, "iframe"),
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
    /// ticks, frames, idle callbacks, `fetch` and body settlements, scripts (external and
    /// inline are told apart by the action's label). User input, XHR responses and image and
    /// iframe loads are told by more than the kind, so they are not among them.
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
            Kind::Script => "executions of external scripts",
            Kind::InlineScript => "executions of the document's inline scripts",
            Kind::Img => "image loads",
            Kind::Iframe => "iframe loads",
        }
    }

    /// Whether events of this kind belong to an element (`on "selector"` applies).
    pub fn has_element(self) -> bool {
        matches!(
            self,
            Kind::User | Kind::Script | Kind::InlineScript | Kind::Img | Kind::Iframe
        )
    }
}

/// How an external script came to run (the filters `blocking`, `async`, `defer`,
/// `inserted`): what decides when the browser runs it, and so what holding it holds up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Loading {
    /// In the document, neither `async` nor `defer`: the parser waits for it.
    Blocking,
    /// In the document with `async`: runs when it arrives.
    Async,
    /// In the document with `defer`, or a module without `async`: runs after parsing, in
    /// document order.
    Defer,
    /// Added by the page's code (`appendChild`, `document.write`, …).
    Inserted,
}

impl Loading {
    /// Every loading with its keyword.
    pub const ALL: [(Loading, &'static str); 4] = [
        (Loading::Blocking, "blocking"),
        (Loading::Async, "async"),
        (Loading::Defer, "defer"),
        (Loading::Inserted, "inserted"),
    ];

    /// The keyword.
    pub fn as_str(self) -> &'static str {
        Loading::ALL
            .iter()
            .find(|(l, _)| *l == self)
            .map_or("?", |(_, s)| s)
    }

    /// The loading a keyword names.
    pub fn parse(s: &str) -> Option<Loading> {
        Loading::ALL.iter().find(|(_, n)| *n == s).map(|(l, _)| *l)
    }

    /// The loading of a script action from its label's first word
    /// (`script:<async|defer|inserted|module|inline|external> …`, as the runtime writes it).
    /// Module scripts are taken as deferred: the label does not say whether one had `async`.
    pub fn of_label(how: &str) -> Option<Loading> {
        match how {
            "external" | "inline" => Some(Loading::Blocking),
            "async" => Some(Loading::Async),
            "defer" | "module" => Some(Loading::Defer),
            "inserted" => Some(Loading::Inserted),
            _ => None,
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

/// DOM event types the page creates: `load`/`error` of images and iframes (the parser's,
/// and those whose `src` a script sets).
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

/// Words a term may be followed by to say how a script loads (the `Loading` filters).
pub fn loading_words() -> impl Iterator<Item = &'static str> {
    Loading::ALL.iter().map(|(_, n)| *n)
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
