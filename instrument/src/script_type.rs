//! Which `<script>` elements hold JavaScript, and which attributes are event handlers.

use crate::mode::ScriptKind;

/// JavaScript MIME type essences (HTML spec, "JavaScript MIME type").
const JS_MIME: &[&str] = &[
    "application/ecmascript",
    "application/javascript",
    "application/x-ecmascript",
    "application/x-javascript",
    "text/ecmascript",
    "text/javascript",
    "text/javascript1.0",
    "text/javascript1.1",
    "text/javascript1.2",
    "text/javascript1.3",
    "text/javascript1.4",
    "text/javascript1.5",
    "text/jscript",
    "text/livescript",
    "text/x-ecmascript",
    "text/x-javascript",
];

/// Whether the essence (`type/subtype`, lower-case, no parameters) is a JavaScript MIME type.
pub(crate) fn is_javascript_essence(essence: &str) -> bool {
    JS_MIME.contains(&essence)
}

/// The kind of an inline script from its (decoded) `type` and `language` attributes, or None
/// when the browser does not run it as JavaScript (importmap, JSON, templates, unknown types).
pub(crate) fn script_kind(type_attr: Option<&str>, language: Option<&str>) -> Option<ScriptKind> {
    let trim = |s: &str| {
        s.trim_matches(|c: char| c.is_ascii_whitespace())
            .to_ascii_lowercase()
    };
    let ty = match type_attr {
        Some(t) => trim(t),
        None => match language {
            Some(l) if !l.is_empty() => format!("text/{}", trim(l)),
            _ => String::new(),
        },
    };
    if ty.is_empty() {
        return Some(ScriptKind::Script);
    }
    if ty == "module" {
        return Some(ScriptKind::Module);
    }
    // The spec compares the whole string (parameters make it a non-JS type).
    JS_MIME.contains(&ty.as_str()).then_some(ScriptKind::Script)
}

/// Event handler content attributes (GlobalEventHandlers, WindowEventHandlers and
/// DocumentAndElementEventHandlers). Unknown `on…` attributes are plain data, so rewriting them
/// would change what `getAttribute` returns for nothing.
const HANDLERS: &[&str] = &[
    "onabort",
    "onafterprint",
    "onanimationcancel",
    "onanimationend",
    "onanimationiteration",
    "onanimationstart",
    "onauxclick",
    "onbeforeinput",
    "onbeforematch",
    "onbeforeprint",
    "onbeforetoggle",
    "onbeforeunload",
    "onblur",
    "oncancel",
    "oncanplay",
    "oncanplaythrough",
    "onchange",
    "onclick",
    "onclose",
    "oncommand",
    "oncontentvisibilityautostatechange",
    "oncontextlost",
    "oncontextmenu",
    "oncontextrestored",
    "oncopy",
    "oncuechange",
    "oncut",
    "ondblclick",
    "ondrag",
    "ondragend",
    "ondragenter",
    "ondragleave",
    "ondragover",
    "ondragstart",
    "ondrop",
    "ondurationchange",
    "onemptied",
    "onended",
    "onerror",
    "onfocus",
    "onfocusin",
    "onfocusout",
    "onformdata",
    "onfullscreenchange",
    "onfullscreenerror",
    "ongotpointercapture",
    "onhashchange",
    "oninput",
    "oninvalid",
    "onkeydown",
    "onkeypress",
    "onkeyup",
    "onlanguagechange",
    "onload",
    "onloadeddata",
    "onloadedmetadata",
    "onloadstart",
    "onlostpointercapture",
    "onmessage",
    "onmessageerror",
    "onmousedown",
    "onmouseenter",
    "onmouseleave",
    "onmousemove",
    "onmouseout",
    "onmouseover",
    "onmouseup",
    "onmousewheel",
    "onoffline",
    "ononline",
    "onpagehide",
    "onpagereveal",
    "onpageshow",
    "onpageswap",
    "onpaste",
    "onpause",
    "onplay",
    "onplaying",
    "onpointercancel",
    "onpointerdown",
    "onpointerenter",
    "onpointerleave",
    "onpointermove",
    "onpointerout",
    "onpointerover",
    "onpointerrawupdate",
    "onpointerup",
    "onpopstate",
    "onprogress",
    "onratechange",
    "onrejectionhandled",
    "onreset",
    "onresize",
    "onscroll",
    "onscrollend",
    "onsearch",
    "onsecuritypolicyviolation",
    "onseeked",
    "onseeking",
    "onselect",
    "onselectionchange",
    "onselectstart",
    "onslotchange",
    "onstalled",
    "onstorage",
    "onsubmit",
    "onsuspend",
    "ontimeupdate",
    "ontoggle",
    "ontouchcancel",
    "ontouchend",
    "ontouchmove",
    "ontouchstart",
    "ontransitioncancel",
    "ontransitionend",
    "ontransitionrun",
    "ontransitionstart",
    "onunhandledrejection",
    "onunload",
    "onvisibilitychange",
    "onvolumechange",
    "onwaiting",
    "onwebkitanimationend",
    "onwebkitanimationiteration",
    "onwebkitanimationstart",
    "onwebkittransitionend",
    "onwheel",
    "onbegin",
    "onend",
    "onrepeat",
    "onfocusin",
    "onactivate",
    "onzoom",
];

/// Whether `name` (lowercase) is an event handler content attribute.
pub(crate) fn is_event_handler(name: &str) -> bool {
    name.starts_with("on") && HANDLERS.contains(&name)
}

/// Attributes whose value is a URL that runs a `javascript:` body when followed.
pub(crate) fn is_navigation_url_attr(name: &str) -> bool {
    matches!(
        name,
        "href" | "src" | "action" | "formaction" | "xlink:href"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_types() {
        assert_eq!(script_kind(None, None), Some(ScriptKind::Script));
        assert_eq!(script_kind(Some(""), None), Some(ScriptKind::Script));
        assert_eq!(
            script_kind(Some(" Text/JavaScript "), None),
            Some(ScriptKind::Script)
        );
        assert_eq!(script_kind(Some("module"), None), Some(ScriptKind::Module));
        assert_eq!(script_kind(Some("importmap"), None), None);
        assert_eq!(script_kind(Some("application/ld+json"), None), None);
        assert_eq!(script_kind(Some("text/template"), None), None);
        assert_eq!(
            script_kind(Some("text/javascript; charset=utf-8"), None),
            None
        );
        assert_eq!(
            script_kind(None, Some("JavaScript1.2")),
            Some(ScriptKind::Script)
        );
        assert_eq!(script_kind(None, Some("vbscript")), None);
        assert_eq!(script_kind(None, Some("")), Some(ScriptKind::Script));
    }

    #[test]
    fn handler_names() {
        assert!(is_event_handler("onclick"));
        assert!(!is_event_handler("only"));
        assert!(!is_event_handler("onboarding"));
    }
}
