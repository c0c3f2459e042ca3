//! Trusted user input through `Input.dispatch*`: mouse at element centres, keys, text.

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::page::Page;

/// An element to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Element {
    /// The first match of a CSS selector in the main frame's document.
    Selector(String),
    /// A backend node id (stable for the node's lifetime, as given by DOM/DOMDebugger).
    BackendNode(i64),
    /// A stable path such as `/html[1]/body[1]/div[2]/#shadow/button[1]` (see
    /// [`visit_elements`](crate::visit_elements)); reaches into shadow roots and same-process
    /// frames, and names the same element when the page is loaded again.
    Path(String),
}

impl From<&str> for Element {
    fn from(s: &str) -> Self {
        Element::Selector(s.to_string())
    }
}

impl From<String> for Element {
    fn from(s: String) -> Self {
        Element::Selector(s)
    }
}

impl std::fmt::Display for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Element::Selector(s) => write!(f, "`{s}`"),
            Element::BackendNode(id) => write!(f, "backend node {id}"),
            Element::Path(p) => write!(f, "path {p}"),
        }
    }
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseButton {
    /// The primary button.
    Left,
    /// The secondary button (context menu).
    Right,
    /// The middle button.
    Middle,
}

impl MouseButton {
    fn name(self) -> &'static str {
        match self {
            MouseButton::Left => "left",
            MouseButton::Right => "right",
            MouseButton::Middle => "middle",
        }
    }

    fn mask(self) -> u32 {
        match self {
            MouseButton::Left => 1,
            MouseButton::Right => 2,
            MouseButton::Middle => 4,
        }
    }
}

/// What `Input.dispatchKeyEvent` needs to know about one key.
struct KeyDef {
    key: String,
    code: String,
    key_code: u32,
    text: Option<String>,
}

fn key_def(key: &str) -> Option<KeyDef> {
    let named = |code: &str, key_code: u32, text: Option<&str>| KeyDef {
        key: key.to_string(),
        code: code.to_string(),
        key_code,
        text: text.map(str::to_string),
    };
    let def = match key {
        "Enter" => named("Enter", 13, Some("\r")),
        "Tab" => named("Tab", 9, None),
        "Backspace" => named("Backspace", 8, None),
        "Escape" => named("Escape", 27, None),
        "Delete" => named("Delete", 46, None),
        "ArrowLeft" => named("ArrowLeft", 37, None),
        "ArrowUp" => named("ArrowUp", 38, None),
        "ArrowRight" => named("ArrowRight", 39, None),
        "ArrowDown" => named("ArrowDown", 40, None),
        "Home" => named("Home", 36, None),
        "End" => named("End", 35, None),
        "PageUp" => named("PageUp", 33, None),
        "PageDown" => named("PageDown", 34, None),
        " " => named("Space", 32, Some(" ")),
        _ => {
            let mut chars = key.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            let upper = c.to_ascii_uppercase();
            let (code, key_code) = if c.is_ascii_alphabetic() {
                (format!("Key{upper}"), upper as u32)
            } else if c.is_ascii_digit() {
                (format!("Digit{c}"), c as u32)
            } else {
                (String::new(), 0)
            };
            KeyDef {
                key: key.to_string(),
                code,
                key_code,
                text: Some(key.to_string()),
            }
        }
    };
    Some(def)
}

impl Page {
    /// Resolve an element to DOM command parameters (`nodeId` or `backendNodeId`).
    pub(crate) async fn node_params(&self, el: &Element) -> Result<Value> {
        match el {
            Element::BackendNode(id) => Ok(json!({ "backendNodeId": id })),
            Element::Path(path) => {
                let doc = self
                    .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }))
                    .await?;
                let root = doc.get("root").unwrap_or(&Value::Null);
                match crate::paths::find_by_path(root, path) {
                    Some(id) => Ok(json!({ "backendNodeId": id })),
                    None => Err(Error::Element(format!("{el} matches nothing"))),
                }
            }
            Element::Selector(sel) => {
                // Every DOM.getDocument renumbers the document's nodes, so a concurrent one
                // (another waiter, an exerciser) can void the root id between the two calls:
                // ask again with a fresh root.
                let mut attempt = 0;
                loop {
                    attempt += 1;
                    let doc = self.call("DOM.getDocument", json!({ "depth": 0 })).await?;
                    let root = doc
                        .get("root")
                        .and_then(|r| r.get("nodeId"))
                        .and_then(Value::as_i64)
                        .ok_or_else(|| Error::BadResponse {
                            method: "DOM.getDocument".into(),
                            detail: "no root nodeId".into(),
                        })?;
                    let found = match self
                        .call(
                            "DOM.querySelector",
                            json!({ "nodeId": root, "selector": sel }),
                        )
                        .await
                    {
                        Ok(f) => f,
                        Err(e) if attempt < 4 && e.to_string().contains("Could not find node") => {
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    let Some(id) = found
                        .get("nodeId")
                        .and_then(Value::as_i64)
                        .filter(|&id| id != 0)
                    else {
                        return Err(Error::Element(format!("{el} matches nothing")));
                    };
                    // Node ids die with the next getDocument; the backend id lives as long as
                    // the node.
                    match self.call("DOM.describeNode", json!({ "nodeId": id })).await {
                        Ok(d) => {
                            if let Some(b) =
                                d.pointer("/node/backendNodeId").and_then(Value::as_i64)
                            {
                                return Ok(json!({ "backendNodeId": b }));
                            }
                            return Ok(json!({ "nodeId": id }));
                        }
                        Err(e) if attempt < 4 && e.to_string().contains("Could not find node") => {
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    /// Scroll the element into view and return the centre of its largest box, in CSS pixels of
    /// the viewport (what `Input.dispatchMouseEvent` takes).
    pub async fn element_center(&self, el: &Element) -> Result<(f64, f64)> {
        let node = self.node_params(el).await?;
        // Fails for nodes without layout; getContentQuads then reports the real problem.
        let _ = self.call("DOM.scrollIntoViewIfNeeded", node.clone()).await;
        let quads = self
            .call("DOM.getContentQuads", node)
            .await
            .map_err(|e| Error::Element(format!("{el} has no box: {e}")))?;
        let mut best: Option<(f64, f64, f64)> = None;
        for q in quads
            .get("quads")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let pts: Vec<f64> = q
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .collect();
            if pts.len() != 8 {
                continue;
            }
            // Shoelace area of the quad; degenerate boxes cannot be clicked.
            let mut area = 0.0;
            for i in 0..4 {
                let j = (i + 1) % 4;
                area += pts[2 * i] * pts[2 * j + 1] - pts[2 * j] * pts[2 * i + 1];
            }
            let area = area.abs() / 2.0;
            if area < 1.0 {
                continue;
            }
            let cx = (pts[0] + pts[2] + pts[4] + pts[6]) / 4.0;
            let cy = (pts[1] + pts[3] + pts[5] + pts[7]) / 4.0;
            if best.is_none_or(|b| area > b.2) {
                best = Some((cx, cy, area));
            }
        }
        best.map(|(x, y, _)| (x, y))
            .ok_or_else(|| Error::Element(format!("{el} has no visible box")))
    }

    async fn mouse(
        &self,
        kind: &str,
        x: f64,
        y: f64,
        button: Option<MouseButton>,
        buttons: u32,
    ) -> Result<()> {
        let mut params = json!({ "type": kind, "x": x, "y": y, "buttons": buttons });
        if let Some(b) = button {
            params["button"] = json!(b.name());
            params["clickCount"] = json!(1);
        }
        self.call("Input.dispatchMouseEvent", params).await?;
        Ok(())
    }

    /// Move the mouse to viewport point (x, y) (fires `mouseover`/`mouseenter`/`mousemove`).
    pub async fn mouse_move(&self, x: f64, y: f64) -> Result<()> {
        self.mouse("mouseMoved", x, y, None, 0).await
    }

    /// Press `button` at (x, y).
    pub async fn mouse_down(&self, x: f64, y: f64, button: MouseButton) -> Result<()> {
        self.mouse("mousePressed", x, y, Some(button), button.mask())
            .await
    }

    /// Release `button` at (x, y) (the browser then fires `click`/`contextmenu`).
    pub async fn mouse_up(&self, x: f64, y: f64, button: MouseButton) -> Result<()> {
        self.mouse("mouseReleased", x, y, Some(button), 0).await
    }

    /// Move, press and release the left button at (x, y).
    pub async fn click_at(&self, x: f64, y: f64) -> Result<()> {
        self.mouse_move(x, y).await?;
        self.mouse_down(x, y, MouseButton::Left).await?;
        self.mouse_up(x, y, MouseButton::Left).await
    }

    /// Click the element's centre (scrolling it into view first). Returns the point.
    pub async fn click(&self, el: impl Into<Element>) -> Result<(f64, f64)> {
        let (x, y) = self.element_center(&el.into()).await?;
        self.click_at(x, y).await?;
        Ok((x, y))
    }

    /// Move the mouse over the element's centre. Returns the point.
    pub async fn hover(&self, el: impl Into<Element>) -> Result<(f64, f64)> {
        let (x, y) = self.element_center(&el.into()).await?;
        self.mouse_move(x, y).await?;
        Ok((x, y))
    }

    /// Give the element keyboard focus.
    pub async fn focus(&self, el: impl Into<Element>) -> Result<()> {
        let node = self.node_params(&el.into()).await?;
        self.call("DOM.focus", node).await?;
        Ok(())
    }

    /// Press and release one key: a named key (`Enter`, `Tab`, `Backspace`, `Escape`,
    /// `Delete`, `ArrowLeft`/`Up`/`Right`/`Down`, `Home`, `End`, `PageUp`, `PageDown`) or a
    /// single character. The focused element receives `keydown`, `keypress`/`input` (for
    /// text) and `keyup`.
    pub async fn press_key(&self, key: &str) -> Result<()> {
        self.key_down(key).await?;
        self.key_up(key).await
    }

    /// Press one key without releasing it (`keydown`, plus `keypress`/`input` for text). Key
    /// names as in [`Page::press_key`].
    pub async fn key_down(&self, key: &str) -> Result<()> {
        let def = key_def(key).ok_or_else(|| Error::Element(format!("unknown key {key:?}")))?;
        let mut down = json!({
            "type": if def.text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": def.key,
            "code": def.code,
            "windowsVirtualKeyCode": def.key_code,
            "nativeVirtualKeyCode": def.key_code,
        });
        if let Some(t) = &def.text {
            down["text"] = json!(t);
            down["unmodifiedText"] = json!(t);
        }
        self.call("Input.dispatchKeyEvent", down).await?;
        Ok(())
    }

    /// Release one key (`keyup`).
    pub async fn key_up(&self, key: &str) -> Result<()> {
        let def = key_def(key).ok_or_else(|| Error::Element(format!("unknown key {key:?}")))?;
        self.call(
            "Input.dispatchKeyEvent",
            json!({
                "type": "keyUp",
                "key": def.key,
                "code": def.code,
                "windowsVirtualKeyCode": def.key_code,
                "nativeVirtualKeyCode": def.key_code,
            }),
        )
        .await?;
        Ok(())
    }

    /// Type `text` into the focused element key by key (characters without a key definition
    /// are inserted with [`Page::insert_text`]).
    pub async fn type_text(&self, text: &str) -> Result<()> {
        for c in text.chars() {
            let s = if c == '\n' {
                "Enter".to_string()
            } else {
                c.to_string()
            };
            if key_def(&s).is_some() {
                self.press_key(&s).await?;
            } else {
                self.insert_text(&s).await?;
            }
        }
        Ok(())
    }

    /// Insert `text` into the focused element as an IME commit (one `input` event, no keys).
    pub async fn insert_text(&self, text: &str) -> Result<()> {
        self.call("Input.insertText", json!({ "text": text }))
            .await?;
        Ok(())
    }
}
