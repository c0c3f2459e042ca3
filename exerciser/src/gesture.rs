//! The gestures a user makes on a control, and how each is dispatched as trusted input.

use shepherd_browser::{Element, Error, MouseButton, Page, Result};

use crate::options::ExerciseOptions;
use crate::rng::Rng;

/// Keys pressed by a key gesture on an element with key listeners (one chosen at random).
const KEYS: &[&str] = &["a", "Enter", "ArrowDown", "ArrowUp", " ", "Escape", "1"];
/// Keys that move a `<select>`'s choice or a range input's value.
const CHOICE_KEYS: &[&str] = &["ArrowDown", "ArrowUp", "End", "Home"];
const RANGE_KEYS: &[&str] = &["ArrowRight", "ArrowLeft", "End", "Home"];

/// One thing a user does to a control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gesture {
    /// The mouse moves onto the element (elements with mouse listeners).
    Hover,
    /// A click: over, down, up.
    Click,
    /// Keys pressed at the focused element (elements with key listeners, range inputs).
    Keys,
    /// Text typed into a text control after clicking into it.
    Type,
    /// A checkbox or radio button toggled from the keyboard (Space).
    KeyToggle,
    /// A button or link activated from the keyboard (Enter).
    KeyActivate,
    /// A `<select>`'s choice moved from the keyboard.
    KeyChoose,
    /// A `<select>`'s choice made with the pointer: a list box's option clicked, or a drop-down
    /// opened by a click and an entry picked in its popup.
    PointerChoose,
    /// Focus moved onto the element, then away (Tab): its focus and blur handlers.
    FocusBlur,
}

impl Gesture {
    /// Every gesture, in the order reports list them.
    pub const ALL: [Gesture; 9] = [
        Gesture::Click,
        Gesture::Type,
        Gesture::KeyChoose,
        Gesture::PointerChoose,
        Gesture::KeyToggle,
        Gesture::KeyActivate,
        Gesture::Keys,
        Gesture::FocusBlur,
        Gesture::Hover,
    ];

    /// Stable name (reports, the trace's coverage records).
    pub fn name(self) -> &'static str {
        match self {
            Gesture::Hover => "hover",
            Gesture::Click => "click",
            Gesture::Keys => "keys",
            Gesture::Type => "type",
            Gesture::KeyToggle => "key-toggle",
            Gesture::KeyActivate => "key-activate",
            Gesture::KeyChoose => "key-choose",
            Gesture::PointerChoose => "pointer-choose",
            Gesture::FocusBlur => "focus-blur",
        }
    }

    /// Log entries the gesture needs at least (typing is cut to the remaining budget).
    pub(crate) fn cost(self) -> usize {
        match self {
            Gesture::Hover => 1,
            Gesture::Click => 3,
            Gesture::Keys | Gesture::KeyToggle | Gesture::KeyActivate | Gesture::KeyChoose => 3,
            Gesture::Type => 5,
            Gesture::PointerChoose => 7,
            Gesture::FocusBlur => 3,
        }
    }

    /// Whether the gesture moves the pointer onto the element (needs a box that is hit there).
    pub(crate) fn pointer(self) -> bool {
        matches!(
            self,
            Gesture::Hover | Gesture::Click | Gesture::Type | Gesture::PointerChoose
        )
    }
}

/// The kind of text a field takes, for what is typed into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    Free,
    Number,
    Email,
    Url,
    Tel,
}

/// Where a gesture goes and what it needs to know about its control.
pub(crate) struct Target<'a> {
    pub(crate) node: i64,
    pub(crate) text: TextKind,
    /// A list box's options (backend ids); empty for a drop-down.
    pub(crate) options: &'a [i64],
    /// A range input (arrows move it).
    pub(crate) range: bool,
}

/// What a gesture dispatched, in order: the log's event names (docs: [`FiredEvent`](crate::FiredEvent)),
/// each with the key pressed and the element it went to when not the control itself.
pub(crate) type Fired = Vec<(&'static str, Option<String>, Option<i64>)>;

/// Where the pointer may touch `node`: its centre when nothing covers it there.
pub(crate) type HitCheck<'a> = &'a (dyn Fn(i64, i64) -> bool + Send + Sync);

/// What every gesture of one step shares.
pub(crate) struct Act<'a> {
    pub(crate) page: &'a Page,
    pub(crate) opts: &'a ExerciseOptions,
    /// Whether a hit at a control's centre is the control.
    pub(crate) hits: HitCheck<'a>,
    /// Log entries left.
    pub(crate) budget: usize,
}

/// Dispatches `gesture` on `t`. Entries are pushed to `fired` as they are dispatched, so a
/// failure half-way still logs what happened.
pub(crate) async fn perform(
    act: &Act<'_>,
    gesture: Gesture,
    t: &Target<'_>,
    rng: &mut Rng,
    fired: &mut Fired,
) -> Result<()> {
    let (page, opts, hits, budget) = (act.page, act.opts, act.hits, act.budget);
    match gesture {
        Gesture::Hover => {
            let (x, y) = point(page, t.node, hits).await?;
            page.mouse_move(x, y).await?;
            fired.push(("mouseover", None, None));
        }
        Gesture::Click => click(page, t.node, t.node, hits, fired).await?,
        Gesture::Keys => {
            focus(page, t.node, fired).await?;
            let keys = if t.range { RANGE_KEYS } else { KEYS };
            press(page, keys[rng.below(keys.len())], fired).await?;
        }
        Gesture::KeyToggle => {
            focus(page, t.node, fired).await?;
            press(page, " ", fired).await?;
        }
        Gesture::KeyActivate => {
            focus(page, t.node, fired).await?;
            press(page, "Enter", fired).await?;
        }
        Gesture::KeyChoose => {
            focus(page, t.node, fired).await?;
            press(page, CHOICE_KEYS[rng.below(CHOICE_KEYS.len())], fired).await?;
        }
        Gesture::PointerChoose => {
            if t.options.is_empty() {
                // A drop-down: the click opens its popup, whose keys pick an entry.
                click(page, t.node, t.node, hits, fired).await?;
                press(page, "ArrowDown", fired).await?;
                press(page, "Enter", fired).await?;
            } else {
                let option = t.options[rng.below(t.options.len())];
                click(page, option, t.node, hits, fired).await?;
            }
        }
        Gesture::Type => {
            click(page, t.node, t.node, hits, fired).await?;
            let text = match t.text {
                TextKind::Number => "42".to_string(),
                TextKind::Email => "ada@example.test".to_string(),
                TextKind::Url => "https://example.test/".to_string(),
                TextKind::Tel => "5550100".to_string(),
                TextKind::Free if opts.text_inputs.is_empty() => "x".to_string(),
                TextKind::Free => opts.text_inputs[rng.below(opts.text_inputs.len())].clone(),
            };
            let room = budget.saturating_sub(3) / 2;
            for c in text.chars().take(room.max(1)) {
                press(page, &c.to_string(), fired).await?;
            }
        }
        Gesture::FocusBlur => {
            focus(page, t.node, fired).await?;
            press(page, "Tab", fired).await?;
        }
    }
    Ok(())
}

/// The point where the pointer touches `node`, or an error when another element covers it.
async fn point(page: &Page, node: i64, hits: HitCheck<'_>) -> Result<(f64, f64)> {
    let (x, y) = page.element_center(&Element::BackendNode(node)).await?;
    // The pointer's point is in the viewport; the hit test takes the document's coordinates.
    let scroll = page
        .call("Page.getLayoutMetrics", serde_json::json!({}))
        .await
        .ok()
        .and_then(|m| {
            let v = m.get("cssVisualViewport")?;
            Some((v.get("pageX")?.as_f64()?, v.get("pageY")?.as_f64()?))
        })
        .unwrap_or((0.0, 0.0));
    let hit = page
        .call(
            "DOM.getNodeForLocation",
            serde_json::json!({
                "x": (x + scroll.0).round() as i64,
                "y": (y + scroll.1).round() as i64,
                "includeUserAgentShadowDOM": false,
            }),
        )
        .await
        .ok()
        .and_then(|v| v.get("backendNodeId").and_then(serde_json::Value::as_i64));
    match hit {
        Some(h) if !hits(node, h) => Err(Error::Element(format!(
            "backend node {node} is covered by backend node {h} at its centre"
        ))),
        _ => Ok((x, y)),
    }
}

/// Over, down and up at `node` (logged against the control `control`). The button is
/// released even when something fails after the press, so no later input becomes a drag.
async fn click(
    page: &Page,
    node: i64,
    control: i64,
    hits: HitCheck<'_>,
    fired: &mut Fired,
) -> Result<()> {
    let on = (node != control).then_some(node);
    let (x, y) = point(page, node, hits).await?;
    page.mouse_move(x, y).await?;
    fired.push(("mouseover", None, on));
    page.mouse_down(x, y, MouseButton::Left).await?;
    fired.push(("mousedown", None, on));
    if let Err(e) = page.mouse_up(x, y, MouseButton::Left).await {
        let _ = page.mouse_up(x, y, MouseButton::Left).await;
        return Err(e);
    }
    fired.push(("click", None, on));
    Ok(())
}

async fn focus(page: &Page, node: i64, fired: &mut Fired) -> Result<()> {
    page.focus(Element::BackendNode(node)).await?;
    fired.push(("focus", None, None));
    Ok(())
}

async fn press(page: &Page, key: &str, fired: &mut Fired) -> Result<()> {
    page.key_down(key).await?;
    fired.push(("keydown", Some(key.to_string()), None));
    if let Err(e) = page.key_up(key).await {
        let _ = page.key_up(key).await;
        return Err(e);
    }
    fired.push(("keyup", Some(key.to_string()), None));
    Ok(())
}

/// Keys pressed at the page as a whole (page-level key listeners), one chosen at random.
pub(crate) async fn page_keys(page: &Page, rng: &mut Rng, fired: &mut Fired) -> Result<()> {
    press(page, KEYS[rng.below(KEYS.len())], fired).await
}
