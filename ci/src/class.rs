//! Race classes: what kind of shared state two events race on, from the location's name
//! (`docs/trace-format.md`, "Location names"). Each class is one SARIF rule, so code scanning
//! can filter and triage races by class.

use shepherd_races::filters::is_handler_slot;

/// What two racing events share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RaceClass {
    /// A JavaScript variable or object property (`Global.x`, `Scope[3].y`, `Object[12].f`,
    /// array cells).
    Variable,
    /// A property or attribute of a DOM node, or its children (`DOMNode[4].value`).
    Dom,
    /// An event's listener list: a dispatch racing with the handler's registration
    /// (`BUTTON[7].click`, `Window[0].load`).
    EventDispatch,
    /// The document's id map (`Tree[1]:coupon`): a lookup racing with the element's arrival.
    ElementId,
    /// A node's existence (`NodeTree:9`): an event fired at a node racing with its creation.
    NodeExistence,
    /// `document.cookie`.
    Cookie,
    /// A Web Storage key.
    Storage,
    /// A timer set or cleared racing with its firing (`Timer:4`).
    Timer,
    /// Not a race: an exploration ran an event before the step that disabled it, and the page
    /// ended differently.
    DisabledEvent,
}

impl RaceClass {
    /// Every class, in rule order (a rule's index in the SARIF run).
    pub const ALL: [RaceClass; 9] = [
        RaceClass::Variable,
        RaceClass::Dom,
        RaceClass::EventDispatch,
        RaceClass::ElementId,
        RaceClass::NodeExistence,
        RaceClass::Cookie,
        RaceClass::Storage,
        RaceClass::Timer,
        RaceClass::DisabledEvent,
    ];

    /// The class of a race on `location` (a trace's location name; a dedicated worker's
    /// `Worker[7]/…` prefix is looked through).
    pub fn of_location(location: &str) -> RaceClass {
        let loc = match location.split_once('/') {
            Some((realm, rest)) if realm.ends_with(']') && !realm.contains('.') => rest,
            _ => location,
        };
        if loc.starts_with("DOMNode[") {
            RaceClass::Dom
        } else if loc.starts_with("Tree[") {
            RaceClass::ElementId
        } else if loc.starts_with("NodeTree:") {
            RaceClass::NodeExistence
        } else if loc.starts_with("Timer:") {
            RaceClass::Timer
        } else if loc.starts_with("Storage[") {
            RaceClass::Storage
        } else if loc.starts_with("Document[") && loc.ends_with("].cookie") {
            RaceClass::Cookie
        } else if is_handler_slot(loc) {
            RaceClass::EventDispatch
        } else {
            RaceClass::Variable
        }
    }

    /// The SARIF rule id (`race/dom`).
    pub fn rule_id(self) -> &'static str {
        match self {
            RaceClass::Variable => "race/variable",
            RaceClass::Dom => "race/dom",
            RaceClass::EventDispatch => "race/event-dispatch",
            RaceClass::ElementId => "race/element-id",
            RaceClass::NodeExistence => "race/node-existence",
            RaceClass::Cookie => "race/cookie",
            RaceClass::Storage => "race/storage",
            RaceClass::Timer => "race/timer",
            RaceClass::DisabledEvent => "race/disabled-event",
        }
    }

    /// The rule's name (SARIF `name`: an identifier).
    pub fn rule_name(self) -> &'static str {
        match self {
            RaceClass::Variable => "VariableRace",
            RaceClass::Dom => "DomRace",
            RaceClass::EventDispatch => "EventDispatchRace",
            RaceClass::ElementId => "ElementIdRace",
            RaceClass::NodeExistence => "NodeExistenceRace",
            RaceClass::Cookie => "CookieRace",
            RaceClass::Storage => "StorageRace",
            RaceClass::Timer => "TimerRace",
            RaceClass::DisabledEvent => "DisabledEvent",
        }
    }

    /// One line about the class.
    pub fn short(self) -> &'static str {
        match self {
            RaceClass::Variable => "Event race on a JavaScript variable or object property",
            RaceClass::Dom => "Event race on a DOM node's property, attribute or children",
            RaceClass::EventDispatch => {
                "Event race between an event's dispatch and its handler's registration"
            }
            RaceClass::ElementId => "Event race between an element lookup by id and its arrival",
            RaceClass::NodeExistence => {
                "Event race between an event at a node and the node's creation"
            }
            RaceClass::Cookie => "Event race on document.cookie",
            RaceClass::Storage => "Event race on a Web Storage key",
            RaceClass::Timer => "Event race between a timer's firing and its setting or clearing",
            RaceClass::DisabledEvent => "An event run before the step that disabled it",
        }
    }

    /// What the class means and what usually fixes it.
    pub fn help(self) -> &'static str {
        match self {
            RaceClass::Variable => {
                "Two events of the page access the same variable, at least one writes it, and \
                 nothing orders them: network timing, timers or the user decide which runs \
                 first. Order them (wait for the writer before reading), initialise the \
                 variable before any event can read it, or make both orders correct."
            }
            RaceClass::Dom => {
                "Two events access the same DOM property, attribute or child list, at least \
                 one writes it, and nothing orders them (a script filling a field the user may \
                 already be typing in, two responses rendering into one element). Order the \
                 updates or make them commute."
            }
            RaceClass::EventDispatch => {
                "An event can be dispatched before its handler is attached (a click on a \
                 button whose script has not run yet) and is then lost. Attach the handler \
                 before the element is usable, or disable the element until it is."
            }
            RaceClass::ElementId => {
                "A script looks an element up by id while the element may not be parsed or \
                 inserted yet. Run the script after the element exists (defer, \
                 DOMContentLoaded) or wait for it."
            }
            RaceClass::NodeExistence => {
                "An event can reach a node before the node exists or after it is replaced. \
                 Create the node before the event source can fire at it."
            }
            RaceClass::Cookie => {
                "Two events read and write document.cookie in either order. Order them or \
                 make the updates commute."
            }
            RaceClass::Storage => {
                "Two events (or two documents) access the same localStorage or \
                 sessionStorage key in either order. Order them or make the updates commute."
            }
            RaceClass::Timer => {
                "A timer may fire before it is cleared or re-armed. Clear it before anything \
                 it depends on changes, or make its callback check the state it needs."
            }
            RaceClass::DisabledEvent => {
                "The explorer ran an event before the step that disabled it in the recorded \
                 order, and the page ended differently: the page relies on that step coming \
                 first."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RaceClass::{self, *};

    #[test]
    fn classes_follow_the_location_grammar() {
        let cases = [
            ("Global.x", Variable),
            ("Scope[3].count", Variable),
            ("Object[12].f", Variable),
            ("Array[4]$[2]", Variable),
            ("Array[4]$LEN", Variable),
            ("DOMNode[4].value", Dom),
            ("DOMNode[4].childList", Dom),
            ("BUTTON[7].click", EventDispatch),
            ("Window[0].load", EventDispatch),
            ("XMLHttpRequest[9].readystatechange", EventDispatch),
            ("Tree[1]:coupon", ElementId),
            ("NodeTree:9", NodeExistence),
            ("NodeTree:9-14", NodeExistence),
            ("Document[2].cookie", Cookie),
            ("Storage[3].cart", Storage),
            ("Timer:4", Timer),
            ("Worker[7]/Global.count", Variable),
            ("Worker[7]/Timer:2", Timer),
        ];
        for (loc, class) in cases {
            assert_eq!(RaceClass::of_location(loc), class, "{loc}");
        }
    }

    #[test]
    fn rule_ids_are_distinct() {
        let mut ids: Vec<&str> = RaceClass::ALL.iter().map(|c| c.rule_id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RaceClass::ALL.len());
    }
}
