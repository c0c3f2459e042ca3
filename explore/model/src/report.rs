//! What an exploration reports: every uncovered race of the initial execution (as `shepherd
//! races` lists them) with a verdict — harmful (with a witness), harmless (and why) or
//! not reordered (and why) — plus reversals found deeper, as the versioned JSON document of
//! `docs/explore-json.md` and a self-contained HTML page.

use crate::outcome::{Outcome, RunRecord};
use crate::steps::{AccessNote, RaceNote};
use crate::verdict::{self, Judgement};
use base64::Engine as _;
use serde_json::{Value, json};
use shepherd_races::report::SourceProvider;
use shepherd_races::report::html::esc;
use std::fmt::Write as _;

/// Version of the JSON document.
pub const JSON_VERSION: u32 = 1;

/// Changed DOM lines shown in a witness.
const DIFF_LINES: usize = 60;

/// One reported race.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The race.
    pub race: RaceNote,
    /// `harmful`, `harmless` or `not-reordered`.
    pub verdict: &'static str,
    /// Why.
    pub reason: String,
    /// The execution that reversed it, if one did.
    pub sequence: Option<u32>,
}

/// Builds the race entries of an outcome, harmful first.
pub fn entries(out: &Outcome) -> Vec<Entry> {
    let mut list = Vec::new();
    let Some(first) = out.runs.first() else {
        return list;
    };
    let mut used = vec![false; out.runs.len()];
    for u in &first.uncovered {
        let (verdict, reason, sequence) = if u.first == u.second {
            (
                "not-reordered",
                "both accesses happen in one step (one release or gesture ran both actions)"
                    .to_string(),
                None,
            )
        } else if let Some(child) = reversal_of(out, 0, u.first, u.second) {
            used[child.id as usize] = true;
            let (v, r) = judged(child);
            (v, r, Some(child.id))
        } else {
            let is_user = |k: u32| {
                first
                    .steps
                    .get(k as usize)
                    .is_some_and(|s| crate::naming::is_user(s))
            };
            let adjacent = first
                .pairs
                .iter()
                .any(|p| p.first == u.first && p.second == u.second);
            let reason = if is_user(u.first) && is_user(u.second) {
                "two user events: the user's order is kept"
            } else if adjacent && !out.complete {
                "not explored within the budget"
            } else if adjacent {
                "its reversed order was explored as part of another sequence"
            } else {
                "covered: the platform orders the two steps, or another race must be reversed first"
            };
            ("not-reordered", reason.to_string(), None)
        };
        list.push(Entry {
            race: u.race.clone(),
            verdict,
            reason,
            sequence,
        });
    }
    // Reversals not named above: deeper ones, or between steps the initial trace did not
    // report as uncovered races.
    for r in &out.runs {
        let Some(o) = &r.origin else { continue };
        if used[r.id as usize] || o.kind != "reversal" {
            continue;
        }
        let (v, reason) = judged(r);
        for race in &o.races {
            list.push(Entry {
                race: race.clone(),
                verdict: v,
                reason: reason.clone(),
                sequence: Some(r.id),
            });
        }
    }
    let rank = |v: &str| match v {
        "harmful" => 0,
        "harmless" => 1,
        _ => 2,
    };
    list.sort_by(|a, b| {
        rank(a.verdict)
            .cmp(&rank(b.verdict))
            .then_with(|| a.race.location.cmp(&b.race.location))
    });
    list
}

fn reversal_of(out: &Outcome, parent: u32, first: u32, second: u32) -> Option<&RunRecord> {
    out.runs.iter().find(|r| {
        r.origin.as_ref().is_some_and(|o| {
            o.kind == "reversal" && o.parent == parent && o.steps == (first, second)
        })
    })
}

fn judged(r: &RunRecord) -> (&'static str, String) {
    match &r.verdict {
        Some(v) if v.verdict == Judgement::Harmful => ("harmful", v.reason.clone()),
        Some(v) => ("harmless", v.reason.clone()),
        None => ("not-reordered", "no parent to compare with".to_string()),
    }
}

fn access_json(a: &AccessNote, sources: &dyn SourceProvider) -> Value {
    json!({
        "stable": a.stable,
        "access": a.access,
        "source": a.source,
        "scope": a.scope,
        "code": a.source.as_deref().and_then(|p| sources.snippet(p)),
    })
}

/// The witness of a reversal: both orders, the reversed pair, exceptions, DOM diff,
/// screenshots, requests.
fn witness(out: &Outcome, child: &RunRecord) -> Value {
    let Some(o) = &child.origin else {
        return Value::Null;
    };
    let Some(parent) = out.runs.get(o.parent as usize) else {
        return Value::Null;
    };
    let shot = |r: &RunRecord| out.screenshot(r).map(|p| p.display().to_string());
    json!({
        "orders": { "parent": parent.steps, "child": child.steps },
        "parent_sequence": parent.id,
        "reversed": {
            "first": o.events.0,
            "second": o.events.1,
            "steps": [o.steps.0, o.steps.1],
            "posts": o.posts,
        },
        "skipped": child.skipped,
        "exceptions": { "parent": parent.snapshot.exceptions, "child": child.snapshot.exceptions },
        "dom_diff": verdict::dom_diff(&parent.snapshot.dom, &child.snapshot.dom, DIFF_LINES),
        "screenshots": { "parent": shot(parent), "child": shot(child) },
        "requests": { "parent": parent.snapshot.requests, "child": child.snapshot.requests },
        "differences": child.verdict.as_ref().map(|v| v.differences.clone()),
    })
}

/// The versioned JSON document (`docs/explore-json.md`).
pub fn json(out: &Outcome, bound: u32, sources: &dyn SourceProvider) -> Value {
    let list = entries(out);
    let count = |v: &str| list.iter().filter(|e| e.verdict == v).count();
    let reversals = out.runs.iter().filter(|r| r.origin.is_some()).count();
    let racing = out.runs.first().map_or(0, |r| r.racing_pairs);
    let races: Vec<Value> = list
        .iter()
        .map(|e| {
            let child = e.sequence.and_then(|s| out.runs.get(s as usize));
            json!({
                "location": e.race.location,
                "kind": e.race.kind,
                "first": access_json(&e.race.first, sources),
                "second": access_json(&e.race.second, sources),
                "verdict": e.verdict,
                "class": child.and_then(|c| c.verdict.as_ref()).map(|v| v.class),
                "reason": e.reason,
                "differences": child.and_then(|c| c.verdict.as_ref()).map(|v| v.differences.clone()),
                "sequence": e.sequence,
                "depth": child.map(|c| c.depth),
                "witness": match child {
                    Some(c) if e.verdict == "harmful" => witness(out, c),
                    _ => Value::Null,
                },
            })
        })
        .collect();
    let disabled: Vec<Value> = out
        .runs
        .iter()
        .filter(|r| r.origin.as_ref().is_some_and(|o| o.kind == "disabled"))
        .map(|r| {
            let o = r
                .origin
                .as_ref()
                .map(|o| (o.events.0.clone(), o.events.1.clone()));
            let (v, reason) = judged(r);
            json!({
                "sequence": r.id,
                "by": o.as_ref().map(|o| &o.0),
                "disabled": o.as_ref().map(|o| &o.1),
                "verdict": v,
                "reason": reason,
                "witness": if v == "harmful" { witness(out, r) } else { Value::Null },
            })
        })
        .collect();
    let secs = out.elapsed.as_secs_f64();
    json!({
        "version": JSON_VERSION,
        "recording": out.site.recording.display().to_string(),
        "page": out.site.page,
        "bound": bound,
        "policy": out.policy,
        "complete": out.complete,
        "sequences": out.runs.len(),
        "failures": out.failures,
        "elapsed_s": (secs * 10.0).round() / 10.0,
        "seconds_per_sequence": if out.runs.is_empty() { Value::Null } else { json!(((secs / out.runs.len() as f64) * 100.0).round() / 100.0) },
        "pruned": {
            "racing_pairs": racing,
            "reversals": reversals,
            "fraction": if racing > 0 { json!(1.0 - (reversals as f64 / racing as f64).min(1.0)) } else { Value::Null },
            "enabled_fraction": out.explorer.pruned_fraction(),
        },
        "summary": {
            "harmful": count("harmful"),
            "harmless": count("harmless"),
            "not_reordered": count("not-reordered"),
        },
        "races": races,
        "disabled": disabled,
    })
}

/// A self-contained HTML page: summary, every race with its verdict, and for each harmful one
/// the witness (both orders, exceptions, DOM diff, both screenshots).
pub fn html(out: &Outcome, bound: u32, sources: &dyn SourceProvider) -> String {
    let list = entries(out);
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
    let harmful = list.iter().filter(|e| e.verdict == "harmful").count();
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
        list.iter().filter(|e| e.verdict == "harmless").count(),
        list.iter().filter(|e| e.verdict == "not-reordered").count(),
        out.elapsed.as_secs_f64(),
    );
    o.push_str("<table><tr><th>location</th><th>accesses</th><th>verdict</th><th>why</th></tr>");
    for (k, e) in list.iter().enumerate() {
        let link = if e.verdict == "harmful" {
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
        if e.verdict != "harmful" {
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
