//! The browser's part of an execution's end state ([`Snapshot`](shepherd_explore_model::snapshot::Snapshot)):
//! the DOM with form field values, read from a private world the page cannot see, and a
//! screenshot that two runs of one state take as the same bytes.

use shepherd_browser::Page;

/// One node per line; runs in an isolated world.
const DOM_JS: &str = r#"(() => {
  const out = [];
  let size = 0;
  const LIMIT = 4000000;
  const push = (line) => { out.push(line); size += line.length; };
  const walk = (n, depth) => {
    if (size > LIMIT) return;
    const pad = '  '.repeat(depth);
    if (n.nodeType === 1) {
      const tag = n.localName;
      if (tag === 'script') {
        const src = n.getAttribute('src') || '';
        if (src.indexOf('/__shepherd/') >= 0) return;
        push(pad + '<script' + (src ? ' src=' + JSON.stringify(src) : '') + '>');
        return;
      }
      const attrs = [];
      for (const a of Array.from(n.attributes)) {
        // The runtime's own request priority (runtime-js/gates.js, raisePriority): not the page's.
        if (a.name === 'fetchpriority' && a.value === 'High') continue;
        let v = a.value;
        if (a.name === 'class') v = v.split(/\s+/).filter(Boolean).sort().join(' ');
        attrs.push(a.name + '=' + JSON.stringify(v));
      }
      attrs.sort();
      if (tag === 'input' || tag === 'textarea' || tag === 'select') {
        attrs.push('.value=' + JSON.stringify(String(n.value)));
        if (n.type === 'checkbox' || n.type === 'radio') attrs.push('.checked=' + n.checked);
      }
      push(pad + '<' + tag + (attrs.length ? ' ' + attrs.join(' ') : '') + '>');
      if (tag === 'style') return;
      for (let c = n.firstChild; c; c = c.nextSibling) walk(c, depth + 1);
    } else if (n.nodeType === 3) {
      const t = n.data.replace(/\s+/g, ' ').trim();
      if (t) push(pad + JSON.stringify(t));
    }
  };
  if (document.documentElement) walk(document.documentElement, 0);
  return out.join('\n');
})()"#;

/// Hides the caret and stops animations so two screenshots of one state are the same bytes.
const STILL_JS: &str = r#"(() => {
  const s = document.createElement('style');
  s.textContent = '*,*::before,*::after{caret-color:transparent!important;animation:none!important;transition:none!important}';
  (document.head || document.documentElement).appendChild(s);
  return true;
})()"#;

/// The DOM of `page` as compared.
pub async fn dom(page: &Page) -> anyhow::Result<String> {
    let v = page.evaluate_isolated(DOM_JS).await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// A screenshot with the caret hidden and animations stopped (changes the page: take it last).
pub async fn screenshot(page: &Page) -> anyhow::Result<Vec<u8>> {
    let _ = page.evaluate_isolated(STILL_JS).await;
    Ok(page.screenshot().await?)
}

/// What the user sees, one line per visible text run or form control, in document order: the
/// title, text of rendered elements, each visible field's value (or checked state) and
/// whether it is disabled, images by source. Attributes that change nothing on screen
/// (`data-*`, `aria-*`, classes) are not in it: a difference only there is not one the user
/// sees.
const VISIBLE_JS: &str = r#"(() => {
  const out = ['title ' + JSON.stringify(document.title || '')];
  const shown = (el) => {
    if (typeof el.checkVisibility === 'function') {
      return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    }
    return el.getClientRects().length > 0;
  };
  const name = (el) => {
    if (el.id) return '#' + el.id;
    const n = el.getAttribute('name');
    return el.localName + (n ? '[name=' + JSON.stringify(n) + ']' : '');
  };
  const walk = (n) => {
    if (n.nodeType === 1) {
      const tag = n.localName;
      if (tag === 'script' || tag === 'style' || tag === 'template' || tag === 'noscript' || tag === 'head') return;
      if (!shown(n)) return;
      if (tag === 'input' || tag === 'textarea' || tag === 'select') {
        const t = (n.type || '').toLowerCase();
        if (t !== 'hidden') {
          const v = t === 'checkbox' || t === 'radio' ? (n.checked ? 'checked' : 'unchecked') : JSON.stringify(String(n.value));
          out.push('field ' + name(n) + ' ' + v + (n.disabled ? ' disabled' : ''));
        }
      } else if (tag === 'img') {
        out.push('img ' + JSON.stringify(n.getAttribute('src') || '') + ' ' + JSON.stringify(n.alt || ''));
      } else if (tag === 'button' && n.disabled) {
        out.push('disabled ' + name(n));
      }
      for (let c = n.firstChild; c; c = c.nextSibling) walk(c);
    } else if (n.nodeType === 3) {
      const t = n.data.replace(/\s+/g, ' ').trim();
      if (t) out.push(JSON.stringify(t));
    }
  };
  if (document.body) walk(document.body);
  return out.join('\n');
})()"#;

/// The page's cookies (those scripts can read), local and session storage, as `cookie:k`,
/// `local:k`, `session:k` keys.
const STORAGE_JS: &str = r#"(() => {
  const o = {};
  try {
    for (const c of document.cookie.split(';')) {
      const i = c.indexOf('=');
      const k = (i < 0 ? c : c.slice(0, i)).trim();
      if (k) o['cookie:' + k] = i < 0 ? '' : c.slice(i + 1).trim();
    }
  } catch (_) {}
  for (const [prefix, s] of [['local:', () => localStorage], ['session:', () => sessionStorage]]) {
    try {
      const st = s();
      for (let i = 0; i < st.length; i++) {
        const k = st.key(i);
        o[prefix + k] = String(st.getItem(k));
      }
    } catch (_) {}
  }
  return o;
})()"#;

/// How many DOM mutations this document has had since it was first asked (a MutationObserver in
/// the private world, installed by the first call).
const MUTATIONS_JS: &str = r#"(() => {
  const w = globalThis;
  if (!w.__shepherdMutations) {
    w.__shepherdMutations = { n: 0 };
    try {
      new MutationObserver((list) => { w.__shepherdMutations.n += list.length; })
        .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    } catch (_) {}
  }
  return w.__shepherdMutations.n;
})()"#;

/// The number of elements in `page`'s document (`None` when it cannot tell: no document yet,
/// or the question failed).
pub async fn elements(page: &Page) -> Option<u64> {
    page.evaluate_isolated("document.getElementsByTagName('*').length")
        .await
        .ok()?
        .as_u64()
}

/// What the user sees of `page` ([`VISIBLE_JS`]).
pub async fn visible(page: &Page) -> anyhow::Result<String> {
    let v = page.evaluate_isolated(VISIBLE_JS).await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// The page's script-readable cookies and web storage.
pub async fn storage(page: &Page) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let v = page.evaluate_isolated(STORAGE_JS).await?;
    let mut out = std::collections::BTreeMap::new();
    if let Some(o) = v.as_object() {
        for (k, v) in o {
            out.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
        }
    }
    Ok(out)
}

/// The document's DOM mutation count so far (0 on the first call, which starts counting).
pub async fn mutations(page: &Page) -> u64 {
    match page.evaluate_isolated(MUTATIONS_JS).await {
        Ok(v) => v.as_u64().unwrap_or(0),
        Err(_) => 0,
    }
}
