//! The report as one self-contained HTML page, drawn from the JSON document: a row per
//! location (harmful first, the most likely bad orders first, with the count of pairs), every
//! race with its answer, and for each harmful one the witness as the user would see both
//! orders — the two screenshots side by side, the text that differs, the exception with the
//! line that threw, the events moved.

use super::entries::RaceVerdict;
use super::json::{Code, ExploreReport, RaceEntry, Witness, rule_name};
use base64::Engine as _;
use shepherd_races::report::html::esc;
use std::fmt::Write as _;

/// The page for `doc`. Screenshots are read from the files the document names and embedded.
pub fn html(doc: &ExploreReport) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!doctype html><html><head><meta charset=utf-8><title>Shepherd explore: {}</title><style>\
         body{{font:14px system-ui,sans-serif;margin:2em;max-width:1200px}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}\
         .harmful{{color:#b00;font-weight:bold}}.harmless{{color:#070}}.not-explored{{color:#666}}\
         pre{{background:#f6f6f6;padding:8px;overflow:auto;max-height:400px}}\
         .shots{{display:flex;gap:1em}}.shots figure{{margin:0;flex:1}}.shots img{{max-width:100%;border:1px solid #ccc}}\
         li.moved{{background:#ffd}}section{{border-top:2px solid #ddd;margin-top:2em}}\
         </style></head><body>",
        esc(&doc.page)
    );
    let s = &doc.summary;
    let _ = write!(
        o,
        "<h1>Exploration of {}</h1><p>{} uncovered races: <span class=harmful>{} harmful</span>, \
         <span class=harmless>{} harmless</span> ({} only in DOM the user does not see), {} not explored{}. \
         {} executions ({} probes{}{}), {:.1} s.</p>",
        esc(&doc.page),
        s.races,
        s.harmful,
        s.harmless,
        s.invisible,
        s.not_explored,
        covered_note(s.covered_harmful),
        doc.sequences,
        doc.probes,
        match &doc.policy {
            Some(p) => format!(", under the repair policies {}", esc(p)),
            None => String::new(),
        },
        if doc.complete {
            ", complete"
        } else {
            ", stopped by the budget"
        },
        doc.elapsed_s,
    );
    o.push_str(
        "<h2>Locations</h2><table><tr><th>location</th><th>verdict</th><th>pairs</th>\
         <th>rule</th><th>window</th></tr>",
    );
    for l in &doc.locations {
        let first = l.races.first().copied().unwrap_or(0);
        let _ = write!(
            o,
            "<tr><td><a href=\"#r{first}\">{}</a></td><td class={v}>{v}</td><td>{} ({} harmful)</td><td>{}</td><td>{}</td></tr>",
            esc(&l.name),
            l.pairs,
            l.harmful,
            l.rule.map(rule_name).unwrap_or_default(),
            l.window
                .as_ref()
                .map(|w| esc(&w.describe()))
                .unwrap_or_default(),
            v = l.verdict,
        );
    }
    o.push_str("</table><h2>Races</h2>");
    for l in &doc.locations {
        for &k in &l.races {
            if let Some(r) = doc.races.get(k) {
                race(&mut o, k, r);
            }
        }
    }
    if !doc.deeper.is_empty() {
        o.push_str("<h2>Deeper reversals</h2>");
        for (k, r) in doc.deeper.iter().enumerate() {
            race(&mut o, doc.races.len() + k, r);
        }
    }
    o.push_str("</body></html>");
    o
}

fn race(o: &mut String, k: usize, r: &RaceEntry) {
    let _ = write!(
        o,
        "<section id=r{k}><h3>{} <small>{}</small>: <span class={v}>{v}</span></h3><p>{}</p>",
        esc(&r.name),
        esc(&r.kind),
        esc(&r.reason),
        v = r.verdict,
    );
    for (label, a) in [("earlier", &r.first), ("later", &r.second)] {
        let _ = write!(
            o,
            "<p>{label}: {} in <code>{}</code>{}</p>",
            esc(&a.access),
            esc(&a.stable),
            a.scope
                .as_deref()
                .map(|s| format!(" ({})", esc(s)))
                .unwrap_or_default()
        );
        if let Some(c) = &a.code {
            code(o, c);
        }
    }
    if r.verdict == RaceVerdict::Harmful
        && let Some(w) = &r.witness
    {
        witness(o, w);
    }
    o.push_str("</section>");
}

fn code(o: &mut String, c: &Code) {
    o.push_str("<pre>");
    for l in &c.lines {
        let mark = if l.line == c.line { "&gt;" } else { " " };
        let _ = writeln!(o, "{mark}{:5} {}", l.line, esc(&l.text));
    }
    let _ = write!(o, "</pre><small>{}</small>", esc(&c.url));
}

fn witness(o: &mut String, w: &Witness) {
    let img = |path: &Option<String>, label: &str| {
        let Some(png) = path.as_ref().and_then(|p| std::fs::read(p).ok()) else {
            return format!("<figure><figcaption>{label}</figcaption>(no screenshot)</figure>");
        };
        format!(
            "<figure><figcaption>{label}</figcaption><img alt=\"{label}\" src=\"data:image/png;base64,{}\"></figure>",
            base64::engine::general_purpose::STANDARD.encode(png)
        )
    };
    let _ = write!(
        o,
        "<div class=shots>{}{}</div>",
        img(&w.screenshots.recorded, "as recorded"),
        img(&w.screenshots.reordered, "the other order"),
    );
    if !w.visible_diff.is_empty() {
        let _ = write!(
            o,
            "<h4>What the user sees (- as recorded, + the other order)</h4><pre>{}</pre>",
            esc(&w.visible_diff)
        );
    }
    if w.exceptions.recorded != w.exceptions.reordered {
        let _ = write!(
            o,
            "<h4>Uncaught exceptions</h4><table><tr><th>as recorded</th><th>the other order</th></tr>\
             <tr><td><pre>{}</pre></td><td><pre>{}</pre></td></tr></table>",
            esc(&w.exceptions.recorded.join("\n")),
            esc(&w.exceptions.reordered.join("\n"))
        );
        for c in &w.exception_code {
            code(o, c);
        }
    }
    if let Some(st) = &w.storage {
        let fmt = |m: &std::collections::BTreeMap<String, String>| {
            m.iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let _ = write!(
            o,
            "<h4>Cookies and storage</h4><table><tr><th>as recorded</th><th>the other order</th></tr>\
             <tr><td><pre>{}</pre></td><td><pre>{}</pre></td></tr></table>",
            esc(&fmt(&st.recorded)),
            esc(&fmt(&st.reordered))
        );
    }
    if w.requests.recorded != w.requests.reordered {
        let _ = write!(
            o,
            "<h4>Requests</h4><table><tr><th>as recorded</th><th>the other order</th></tr>\
             <tr><td><pre>{}</pre></td><td><pre>{}</pre></td></tr></table>",
            esc(&w.requests.recorded.join("\n")),
            esc(&w.requests.reordered.join("\n"))
        );
    }
    let order = |steps: &[String]| {
        let mut s = String::from("<ol start=0>");
        for st in steps {
            let moved = w.moved.contains(st) || w.delayed.contains(st);
            let _ = write!(
                s,
                "<li{}><code>{}</code></li>",
                if moved { " class=moved" } else { "" },
                esc(st)
            );
        }
        s.push_str("</ol>");
        s
    };
    let _ = write!(
        o,
        "<details><summary>Both orders (sequences {} and {}), DOM diff</summary>\
         <table><tr><th>as recorded</th><th>the other order</th></tr><tr><td>{}</td><td>{}</td></tr></table>\
         <pre>{}</pre></details>",
        w.sequences.recorded,
        w.sequences.reordered,
        order(&w.orders.recorded),
        order(&w.orders.reordered),
        esc(&w.dom_diff)
    );
}

/// `; and N covered races found harmful` when there are some.
pub(crate) fn covered_note(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "; and 1 covered race found harmful".into(),
        n => format!("; and {n} covered races found harmful"),
    }
}
