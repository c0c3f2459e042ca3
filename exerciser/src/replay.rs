//! Replaying an exercise's log on a fresh load of the same page, one dispatch at a time.

use shepherd_browser::{Element, Error, MouseButton, Page, Result};

use crate::report::FiredEvent;

/// Move the mouse to the top-left corner of the viewport. An exercise starts with this; call
/// it before replaying a log with [`fire`].
pub async fn reset_pointer(page: &Page) -> Result<()> {
    page.mouse_move(0.0, 0.0).await
}

/// Dispatch one logged event again, addressing its target by [`FiredEvent::path`] (so it works
/// on a fresh load of the same page) or, without a path, the page as a whole. Each entry is one
/// dispatch, so a scheduler can interleave other events between the entries of one click or key
/// press. Does not wait for the page to settle.
pub async fn fire(page: &Page, ev: &FiredEvent) -> Result<()> {
    let element = || {
        if ev.path.is_empty() {
            Err(Error::Element(format!(
                "event {} #{} has no target path",
                ev.event, ev.seq
            )))
        } else {
            Ok(Element::Path(ev.path.clone()))
        }
    };
    let key = || {
        ev.detail
            .clone()
            .ok_or_else(|| Error::Element(format!("key event #{} without a key", ev.seq)))
    };
    match ev.event.as_str() {
        "mouseover" => {
            page.hover(element()?).await?;
        }
        "mousedown" => {
            let (x, y) = page.element_center(&element()?).await?;
            page.mouse_down(x, y, MouseButton::Left).await?;
        }
        "click" => {
            let (x, y) = page.element_center(&element()?).await?;
            page.mouse_up(x, y, MouseButton::Left).await?;
        }
        "focus" => page.focus(element()?).await?,
        "keydown" => page.key_down(&key()?).await?,
        "keyup" => page.key_up(&key()?).await?,
        other => {
            return Err(Error::Element(format!("unknown logged event {other:?}")));
        }
    }
    Ok(())
}
