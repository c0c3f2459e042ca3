//! The report as one self-contained HTML page: summary, every race with its verdict, and for
//! each harmful one the witness (both orders, exceptions, DOM diff, both screenshots).

use super::entries::{self, DIFF_LINES, RaceVerdict};
use crate::outcome::{Outcome, RunRecord};
use crate::verdict;
use base64::Engine as _;
use shepherd_races::report::SourceProvider;
use shepherd_races::report::html::esc;
use std::fmt::Write as _;

/// A self-contained HTML page: summary, every race with its verdict, and for each harmful one
/// the witness (both orders, exceptions, DOM diff, both screenshots).
pub fn html(out: &Outcome, bound: u32, sources: &dyn SourceProvider) -> String {
    let list = entries::entries(out);
    let mut o = String::new();
    let _ = write!(
        o,
        "<!doctype html><html><head><meta charset=utf-8><title>Shepherd explore: {}</title><style>\
         body{{font:14px system-ui,sans-serif;margin:2em;max-width:1200px}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}\
         .harmful{{color:#b00;font-weight:bold}}.harmless{{color:#070}}.not-reordered{{color:#666}}\
         pre{{background:#f6f6f6;padding:8px;overflow:auto;max-height:400px}}\
         .shots img{{max-width:48%;border:1px solid #ccc;margin-right:1%}}\
         ol li.rev{{background:#ffd}}section{{border-top:2px solid #ddd;margin-top:2em}}\
         </style></head><body>",
        esc(&out.site.page)
    );
    let harmful = list
        .iter()
        .filter(|e| e.verdict == RaceVerdict::Harmful)
        .count();
    let _ = write!(
        o,
        "<h1>Exploration of {}</h1><p>{} sequences explored (bound {bound}{}{}), {} harmful, {} harmless, \
         {} not reordered; {:.1} s in all.</p>",
        esc(&out.site.page),
        out.runs.len(),
        match &out.policy {
            Some(p) => format!(", under the repair policies {}", esc(p)),
            None => String::new(),
        },
        if out.complete {
            ", complete"
        } else {
            ", stopped by the budget"
        },
        harmful,
        list.iter()
            .filter(|e| e.verdict == RaceVerdict::Harmless)
            .count(),
        list.iter()
            .filter(|e| e.verdict == RaceVerdict::NotReordered)
            .count(),
        out.elapsed.as_secs_f64(),
    );
    o.push_str("<table><tr><th>location</th><th>accesses</th><th>verdict</th><th>why</th></tr>");
    for (k, e) in list.iter().enumerate() {
        let link = if e.verdict == RaceVerdict::Harmful {
            format!("<a href=\"#w{k}\">{}</a>", esc(&e.race.location))
        } else {
            esc(&e.race.location)
        };
        let _ = write!(
            o,
            "<tr><td>{link}</td><td>{} {}<br>{} {}</td><td class={v}>{v}</td><td>{}</td></tr>",
            esc(&e.race.first.access),
            esc(e
                .race
                .first
                .source
                .as_deref()
                .unwrap_or(&e.race.first.stable)),
            esc(&e.race.second.access),
            esc(e
                .race
                .second
                .source
                .as_deref()
                .unwrap_or(&e.race.second.stable)),
            esc(&e.reason),
            v = e.verdict,
        );
    }
    o.push_str("</table>");
    for (k, e) in list.iter().enumerate() {
        if e.verdict != RaceVerdict::Harmful {
            continue;
        }
        let Some(child) = e.sequence.and_then(|s| out.runs.get(s as usize)) else {
            continue;
        };
        let Some(origin) = &child.origin else {
            continue;
        };
        let Some(parent) = out.runs.get(origin.parent as usize) else {
            continue;
        };
        let _ = write!(
            o,
            "<section id=w{k}><h2>{}: {}</h2><p>{}</p>",
            esc(&e.race.location),
            esc(&e.race.kind),
            esc(&e.reason)
        );
        for (label, a) in [("first", &e.race.first), ("second", &e.race.second)] {
            let _ = write!(
                o,
                "<p>{label}: {} in <code>{}</code>",
                esc(&a.access),
                esc(&a.stable)
            );
            if let Some(sn) = a.source.as_deref().and_then(|p| sources.snippet(p)) {
                o.push_str("<pre>");
                for l in &sn.lines {
                    let mark = if l.line == sn.line { "&gt;" } else { " " };
                    let _ = writeln!(o, "{mark}{:5} {}", l.line, esc(&l.text));
                }
                let _ = write!(o, "</pre><small>{}</small>", esc(&sn.url));
            }
            o.push_str("</p>");
        }
        let order = |r: &RunRecord, hi: &[&str]| {
            let mut s = String::from("<ol start=0>");
            for st in &r.steps {
                let cls = if hi.contains(&st.as_str()) {
                    " class=rev"
                } else {
                    ""
                };
                let _ = write!(s, "<li{cls}><code>{}</code></li>", esc(st));
            }
            s.push_str("</ol>");
            s
        };
        let hi = [origin.events.0.as_str(), origin.events.1.as_str()];
        let _ = write!(
            o,
            "<table><tr><th>parent (sequence {})</th><th>reversed (sequence {})</th></tr><tr><td>{}</td><td>{}</td></tr></table>",
            parent.id,
            child.id,
            order(parent, &hi),
            order(child, &hi)
        );
        if parent.snapshot.exceptions != child.snapshot.exceptions {
            let _ = write!(
                o,
                "<h3>Exceptions</h3><table><tr><th>parent</th><th>reversed</th></tr><tr><td><pre>{}</pre></td><td><pre>{}</pre></td></tr></table>",
                esc(&parent.snapshot.exceptions.join("\n")),
                esc(&child.snapshot.exceptions.join("\n"))
            );
        }
        if parent.snapshot.dom != child.snapshot.dom {
            let _ = write!(
                o,
                "<h3>DOM diff</h3><pre>{}</pre>",
                esc(&verdict::dom_diff(
                    &parent.snapshot.dom,
                    &child.snapshot.dom,
                    DIFF_LINES
                ))
            );
        }
        let img = |r: &RunRecord| {
            out.screenshot(r)
                .and_then(|p| std::fs::read(p).ok())
                .map(|png| {
                    format!(
                        "<img alt=\"sequence {}\" src=\"data:image/png;base64,{}\">",
                        r.id,
                        base64::engine::general_purpose::STANDARD.encode(png)
                    )
                })
                .unwrap_or_default()
        };
        let _ = write!(
            o,
            "<h3>End states (parent, reversed)</h3><div class=shots>{}{}</div></section>",
            img(parent),
            img(child)
        );
    }
    o.push_str("</body></html>");
    o
}
