//! User events of a recording as gestures the explorer can perform again: a click, a hover, a
//! focus, a key press or inserted text, each at the element the runtime named by its stable
//! path (`#id>tag:i…`). One gesture is one user event of the explored sequence; the browser
//! actions it causes (`mousedown`, `mouseup`, `click`, `focus`…) belong to its step.

use serde::{Deserialize, Serialize};
use shepherd_trace::{ActionType, Op, Trace};
use std::collections::HashMap;

/// What the user did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GestureKind {
    /// Press and release the primary button on the element.
    Click,
    /// Move the mouse onto the element.
    Hover,
    /// Give the element keyboard focus.
    Focus,
    /// Press a key (a DOM `key` value: `a`, `Enter`…) with the element focused: `keydown`,
    /// and `keypress`/`input` for text.
    KeyDown(String),
    /// Release a key (`keyup`). A separate user event: pages react to the press in timers
    /// that run before the release.
    KeyUp(String),
    /// Insert text (an IME commit) into the focused field so that it holds this value.
    Text(String),
}

/// One user gesture of a recording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gesture {
    /// What to do.
    pub kind: GestureKind,
    /// The target as the runtime names it (`#new-todo`, `>html:0>body:1>button:0`, `window`).
    pub path: String,
    /// The recorded actions it caused; the first one is its place in the recorded order.
    pub actions: Vec<u32>,
    /// Where a key or text goes: at its target, or wherever the focus is.
    #[serde(default)]
    pub aim: Aim,
    /// The gesture begins with the user's own focus on its target (they clicked or tabbed into
    /// the field, then typed): performing it focuses the target first, wherever the focus was.
    #[serde(default)]
    pub focuses: bool,
}

/// Where a keyboard gesture is aimed. A key goes to the focused element: when the user put
/// the focus on the recorded target (a click, Tab, a focus the runtime counted as theirs), the
/// key is meant for that element; when the page put it there (an `autofocus`, whose focus
/// event the runtime gives to the action that inserted the element), the recorded target is
/// only where the focus happened to be, and in another order the same key goes elsewhere (to
/// the page's shortcuts before the autofocus).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Aim {
    /// At the recorded target (every pointer gesture; keys after the user's own focus).
    #[default]
    Target,
    /// Wherever the focus is when it is performed: the page focused the recorded target.
    Focus,
}

impl Gesture {
    /// A CSS selector for the target; `None` for the page as a whole (window, document).
    pub fn selector(&self) -> Option<String> {
        selector(&self.path)
    }

    /// The element that must exist before a user can perform the gesture: its target, or the
    /// page's body for a key the page's focus aimed; `None` for the page as a whole.
    pub fn needs(&self) -> Option<String> {
        match self.aim {
            Aim::Target => self.selector(),
            Aim::Focus => Some("body".to_string()),
        }
    }

    /// Short text for reports (`click #b`, `key Enter at #new-todo`).
    pub fn describe(&self) -> String {
        match &self.kind {
            GestureKind::Click => format!("click {}", self.path),
            GestureKind::Hover => format!("hover {}", self.path),
            GestureKind::Focus => format!("focus {}", self.path),
            GestureKind::KeyDown(k) => format!("key {k} down at {}", self.path),
            GestureKind::KeyUp(k) => format!("key {k} up at {}", self.path),
            GestureKind::Text(t) => format!("text {t:?} into {}", self.path),
        }
    }
}

/// The user actions of `trace` grouped into gestures, in order.
pub fn gestures(trace: &Trace) -> Vec<Gesture> {
    let mut out: Vec<Gesture> = Vec::new();
    // The last gesture is a click that already has its `click`: a new press starts another.
    let mut clicked_last = false;
    let s = |id| trace.strings.get(id);
    // Per node (`INPUT[31]`), whether the last focus it received was the user's.
    let mut focused_by_user: HashMap<&str, bool> = HashMap::new();
    for a in &trace.actions {
        let Some(ty) = trace.kind_of(a).event_type() else {
            continue;
        };
        let node = fired_at(trace, a.id, ty);
        if ty == "focus"
            && let Some(n) = node
        {
            focused_by_user.insert(n, a.ty == ActionType::UserInterface);
        }
        if a.ty != ActionType::UserInterface {
            continue;
        }
        let aim = match ty {
            "keydown" | "keyup" | "keypress" | "beforeinput" | "input"
                if node.is_some_and(|n| focused_by_user.get(n) == Some(&false)) =>
            {
                Aim::Focus
            }
            _ => Aim::Target,
        };
        let Some(path) = user_path(s(a.stable)) else {
            continue;
        };
        let ops = trace.ops_of(a.id);
        let key = ops.iter().find_map(|op| match op {
            Op::Enter { scope, .. } => s(*scope).strip_prefix("key:").map(str::to_string),
            _ => None,
        });
        let value = ops.iter().find_map(|op| match *op {
            Op::Write { loc, value, .. } if s(loc).ends_with(".value") => {
                let v = value.get()?;
                serde_json::from_str::<String>(s(v)).ok().or_else(|| {
                    s(v).strip_prefix('"')
                        .map(|t| t.trim_end_matches(['…', '"']).to_string())
                })
            }
            _ => None,
        });
        let clicked = clicked_last;
        let last = out.last_mut();
        let same = |g: &Gesture| g.path == path;
        let start = match ty {
            "mousedown" | "pointerdown" => match last {
                Some(g) if g.kind == GestureKind::Hover && same(g) => {
                    g.kind = GestureKind::Click;
                    g.actions.push(a.id);
                    None
                }
                // pointerdown then mousedown: one press.
                Some(g) if g.kind == GestureKind::Click && same(g) && !clicked => {
                    g.actions.push(a.id);
                    None
                }
                _ => Some(GestureKind::Click),
            },
            "click" | "dblclick" | "auxclick" | "contextmenu" => match last {
                Some(g) if g.kind == GestureKind::Click && same(g) && !clicked => {
                    g.actions.push(a.id);
                    clicked_last = true;
                    None
                }
                Some(g) if g.kind == GestureKind::Hover && same(g) => {
                    g.kind = GestureKind::Click;
                    g.actions.push(a.id);
                    None
                }
                _ => Some(GestureKind::Click),
            },
            "keydown" => Some(GestureKind::KeyDown(key.unwrap_or_default())),
            "keyup" => Some(GestureKind::KeyUp(key.unwrap_or_default())),
            "beforeinput" | "input" => match last {
                Some(g) if same(g) && matches!(g.kind, GestureKind::KeyDown(_)) => {
                    g.actions.push(a.id);
                    None
                }
                Some(g) if same(g) && matches!(g.kind, GestureKind::Text(_)) && ty == "input" => {
                    if let Some(v) = value {
                        g.kind = GestureKind::Text(v);
                    }
                    g.actions.push(a.id);
                    None
                }
                _ => Some(GestureKind::Text(value.unwrap_or_default())),
            },
            "focus" | "focusin" => match last {
                Some(g) if same(g) => {
                    g.actions.push(a.id);
                    None
                }
                _ => Some(GestureKind::Focus),
            },
            "mouseover" | "mouseenter" | "mousemove" | "pointerover" | "pointerenter"
            | "pointermove" => match last {
                Some(g) if same(g) => {
                    g.actions.push(a.id);
                    None
                }
                _ => Some(GestureKind::Hover),
            },
            _ => {
                // Consequences of the last gesture (mouseup, keypress, change, blur, scroll…).
                if let Some(g) = last {
                    g.actions.push(a.id);
                }
                None
            }
        };
        if let Some(kind) = start {
            clicked_last = matches!(ty, "click" | "dblclick" | "auxclick" | "contextmenu");
            // A focus right before typing into the same field (nothing else ran between them)
            // is part of the typing; a focus long before (`autofocus` while the page loads)
            // stays a gesture of its own, at its own place in the order.
            if let Some(g) = out.last()
                && g.kind == GestureKind::Focus
                && g.path == path
                && matches!(kind, GestureKind::KeyDown(_) | GestureKind::Text(_))
                && g.actions.last().is_some_and(|&l| l + 1 == a.id)
            {
                let mut g = out.pop().unwrap_or_else(|| unreachable!());
                g.kind = kind;
                g.focuses = true;
                g.actions.push(a.id);
                out.push(g);
                continue;
            }
            out.push(Gesture {
                kind,
                path,
                actions: vec![a.id],
                aim,
                focuses: false,
            });
        }
    }
    // A key whose name was not recorded cannot be pressed again.
    out.retain(
        |g| !matches!(&g.kind, GestureKind::KeyDown(k) | GestureKind::KeyUp(k) if k.is_empty()),
    );
    out
}

/// What the user typed, key by key, in these gestures, per field in order (`["Ada"]` for
/// `A`, `d`, `a` at `#name`): the text a field must still hold for the typing to count as
/// kept. Named keys that do not edit the text (`Shift`, `Enter`, `Tab`) add nothing; a field
/// whose typing has other named keys (`Backspace`, arrows) or inserted text is left out, its
/// effect is not a string the gestures spell.
pub fn typed_texts<'g>(gestures: impl IntoIterator<Item = &'g Gesture>) -> Vec<String> {
    /// What one gesture does to its field's typed text.
    enum Edit<'k> {
        Char(&'k str),
        Neutral,
        Opaque,
    }
    let mut per_field: Vec<(&str, Option<String>)> = Vec::new();
    for g in gestures {
        let edit = match &g.kind {
            GestureKind::KeyDown(k) if k.chars().count() == 1 => Edit::Char(k),
            GestureKind::KeyDown(k)
                if matches!(k.as_str(), "Shift" | "CapsLock" | "Enter" | "Tab") =>
            {
                Edit::Neutral
            }
            GestureKind::KeyDown(_) | GestureKind::Text(_) => Edit::Opaque,
            _ => continue,
        };
        let i = match per_field.iter().position(|(p, _)| *p == g.path) {
            Some(i) => i,
            None => {
                per_field.push((g.path.as_str(), Some(String::new())));
                per_field.len() - 1
            }
        };
        match edit {
            Edit::Char(c) => {
                if let Some(t) = &mut per_field[i].1 {
                    t.push_str(c);
                }
            }
            Edit::Neutral => {}
            Edit::Opaque => per_field[i].1 = None,
        }
    }
    per_field
        .into_iter()
        .filter_map(|(_, t)| t.filter(|t| !t.is_empty()))
        .collect()
}

/// The node an event action's dispatch fired at, as the trace names it (`INPUT[31]` of
/// `fire:keydown @ INPUT[31]`).
fn fired_at<'t>(trace: &'t Trace, action: u32, ty: &str) -> Option<&'t str> {
    trace.ops_of(action).iter().find_map(|op| match op {
        Op::Enter { scope, .. } => trace
            .strings
            .get(*scope)
            .strip_prefix("fire:")?
            .strip_prefix(ty)?
            .strip_prefix(" @ "),
        _ => None,
    })
}

/// The target path of a user event's stable id (`doc/event:click@#b#1` → `#b`).
fn user_path(stable: &str) -> Option<String> {
    let rest = stable.strip_prefix("doc/")?;
    let (_, after) = rest.split_once('@')?;
    let (path, n) = after.rsplit_once('#')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || path.is_empty() {
        return None;
    }
    Some(path.to_string())
}

/// A CSS selector for a runtime target path; `None` for `window`/`document` or paths through
/// non-element nodes.
pub fn selector(path: &str) -> Option<String> {
    if path == "window" || path == "document" {
        return None;
    }
    let mut out = String::new();
    let mut steps = path;
    if let Some(rest) = path.strip_prefix('#') {
        let (id, tail) = match rest.find('>') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let esc = id.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("[id=\"{esc}\"]"));
        steps = tail;
    } else {
        out.push_str(":root");
        // The first step is the root element itself.
        let first = steps.strip_prefix('>')?;
        let end = first.find('>').unwrap_or(first.len());
        steps = &first[end..];
    }
    for step in steps.split('>').filter(|s| !s.is_empty()) {
        let (tag, idx) = step.rsplit_once(':')?;
        let i: usize = idx.parse().ok()?;
        if tag.is_empty() || tag.starts_with('#') {
            return None;
        }
        out.push_str(&format!(">{tag}:nth-child({})", i + 1));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_trace::TraceBuilder;

    #[test]
    fn selectors_from_paths() {
        assert_eq!(selector("#b").as_deref(), Some("[id=\"b\"]"));
        assert_eq!(
            selector("#list>li:0>button:2").as_deref(),
            Some("[id=\"list\"]>li:nth-child(1)>button:nth-child(3)")
        );
        assert_eq!(
            selector(">html:0>body:1>button:0").as_deref(),
            Some(":root>body:nth-child(2)>button:nth-child(1)")
        );
        assert_eq!(selector("window"), None);
        assert_eq!(selector(">html:0>#text"), None);
        assert_eq!(user_path("doc/event:click@#b#1").as_deref(), Some("#b"));
        assert_eq!(user_path("doc/timer#1"), None);
    }

    /// A key event at `#q`, fired at node `INPUT[31]`.
    fn key_at_q(b: &mut TraceBuilder, n: u32) {
        b.begin(
            ActionType::UserInterface,
            "event:keydown",
            &format!("doc/event:keydown@#q#{n}"),
        );
        b.enter("fire:keydown @ INPUT[31]", None);
        b.enter("key:j", None);
        b.exit();
        b.exit();
        b.end();
    }

    #[test]
    fn a_key_the_page_focused_goes_where_the_focus_is() {
        let mut b = TraceBuilder::new();
        // search.js inserts the box; the browser's autofocus is its fork, not the user's.
        b.begin(ActionType::Unknown, "script", "doc/script@a.js#1");
        b.end();
        b.begin(
            ActionType::Unknown,
            "event:focus",
            "doc/script@a.js#1/event:focus#1",
        );
        b.enter("fire:focus @ INPUT[31]", None);
        b.exit();
        b.end();
        key_at_q(&mut b, 1);
        // Then the user clicks into the box (its focus is theirs) and presses j again.
        b.begin(
            ActionType::UserInterface,
            "event:click",
            "doc/event:click@#q#1",
        );
        b.end();
        b.begin(
            ActionType::UserInterface,
            "event:focus",
            "doc/event:focus@#q#1",
        );
        b.enter("fire:focus @ INPUT[31]", None);
        b.exit();
        b.end();
        key_at_q(&mut b, 2);
        let g = gestures(&b.finish());
        let keys: Vec<(Aim, Option<String>)> = g
            .iter()
            .filter(|g| matches!(g.kind, GestureKind::KeyDown(_)))
            .map(|g| (g.aim, g.needs()))
            .collect();
        assert_eq!(
            keys,
            vec![
                (Aim::Focus, Some("body".to_string())),
                (Aim::Target, Some("[id=\"q\"]".to_string())),
            ],
            "{g:?}"
        );
    }

    #[test]
    fn a_key_without_a_recorded_focus_stays_at_its_target() {
        // The driver focused the field before the runtime ran: nothing says the page did.
        let mut b = TraceBuilder::new();
        key_at_q(&mut b, 1);
        let g = gestures(&b.finish());
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].aim, Aim::Target);
    }

    #[test]
    fn typed_texts_spell_the_keys_per_field() {
        let g = |kind, path: &str| Gesture {
            kind,
            path: path.into(),
            actions: Vec::new(),
            aim: Aim::Target,
            focuses: false,
        };
        let key = |k: &str, path: &str| g(GestureKind::KeyDown(k.into()), path);
        let typing = [
            g(GestureKind::Focus, "#name"),
            key("Shift", "#name"),
            key("A", "#name"),
            g(GestureKind::KeyUp("A".into()), "#name"),
            key("d", "#name"),
            key("a", "#name"),
            key("4", "#age"),
            key("Backspace", "#age"),
            g(GestureKind::Click, "#ok"),
        ];
        assert_eq!(typed_texts(&typing), vec!["Ada".to_string()]);
        assert!(typed_texts(&typing[..1]).is_empty());
    }

    #[test]
    fn an_early_focus_is_not_part_of_later_typing() {
        let mut b = TraceBuilder::new();
        b.begin(
            ActionType::UserInterface,
            "event:focus",
            "doc/event:focus@#in#1",
        );
        b.end();
        b.begin(ActionType::Unknown, "script", "doc/script#1");
        b.end();
        b.begin(
            ActionType::UserInterface,
            "event:input",
            "doc/event:input@#in#1",
        );
        b.write("DOMNode[9].value", Some("\"milk\""));
        b.end();
        let g = gestures(&b.finish());
        assert_eq!(g.len(), 2, "{g:?}");
        assert_eq!(
            (g[0].kind.clone(), g[0].actions.clone()),
            (GestureKind::Focus, vec![0])
        );
        assert_eq!(g[1].kind, GestureKind::Text("milk".into()));
    }

    #[test]
    fn clicks_and_typing_become_gestures() {
        let mut b = TraceBuilder::new();
        for (kind, stable) in [
            ("event:mouseover", "doc/event:mouseover@#b#1"),
            ("event:mousedown", "doc/event:mousedown@#b#1"),
            ("event:mouseup", "doc/event:mouseup@#b#1"),
            ("event:click", "doc/event:click@#b#1"),
            ("event:focus", "doc/event:focus@#in#1"),
        ] {
            b.begin(ActionType::UserInterface, kind, stable);
            b.end();
        }
        b.begin(
            ActionType::UserInterface,
            "event:input",
            "doc/event:input@#in#1",
        );
        b.write("DOMNode[9].value", Some("\"milk\""));
        b.end();
        b.begin(
            ActionType::UserInterface,
            "event:keydown",
            "doc/event:keydown@#in#1",
        );
        b.enter("key:Enter", None);
        b.exit();
        b.end();
        b.begin(
            ActionType::UserInterface,
            "event:keyup",
            "doc/event:keyup@#in#1",
        );
        b.end();
        b.begin(
            ActionType::UserInterface,
            "event:keyup",
            "doc/event:keyup@#in#2",
        );
        b.enter("key:Enter", None);
        b.exit();
        b.end();
        let t = b.finish();
        let g = gestures(&t);
        assert_eq!(g.len(), 4, "{g:?}");
        assert_eq!(
            (g[0].kind.clone(), g[0].path.as_str()),
            (GestureKind::Click, "#b")
        );
        assert_eq!(g[0].actions, vec![0, 1, 2, 3]);
        assert_eq!(g[1].kind, GestureKind::Text("milk".into()));
        assert_eq!(g[1].actions, vec![4, 5]);
        // The user's focus right before is part of the typing: performing it focuses first.
        assert!(g[1].focuses && !g[0].focuses && !g[2].focuses);
        assert_eq!(g[2].kind, GestureKind::KeyDown("Enter".into()));
        assert_eq!(g[2].actions, vec![6]);
        assert_eq!(g[2].selector().as_deref(), Some("[id=\"in\"]"));
        // A keyup without its key recorded is dropped; with it, a gesture of its own.
        assert_eq!(g[3].kind, GestureKind::KeyUp("Enter".into()));
    }
}
