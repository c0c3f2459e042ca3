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
