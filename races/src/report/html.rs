//! One static, self-contained HTML page: counts per filter level, each location's races with
//! the source lines of both accesses (when a [`SourceProvider`] has the script text), the
//! happens-before neighbourhood of both actions as inline SVG (laid out here: layers by
//! longest path, no external tools), and covered races folded under the race covering them.

use super::{AccessView, RaceReport, RaceView, SourceProvider, group_repeats, reason};
use crate::Analysis;
use crate::graph::Successors;

/// Most uncovered races drawn (each with its sources and graph); the rest are counted.
const MAX_RACES: usize = 2_000;
/// Most covered races drawn under one covering race.
const FOLDED_PER_RACE: usize = 50;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

fn source_block(a: &AccessView, sources: &dyn SourceProvider) -> String {
    let mut o = String::new();
    let Some(pos) = &a.source else {
        let _ = write!(
            o,
            "<div class=src muted>no source position{}</div>",
            a.scope
                .as_deref()
                .map(|s| format!(" (scope {})", esc(s)))
                .unwrap_or_default()
        );
        return o;
    };
    let own = if a.access_source.is_some() {
        ""
    } else {
        " <span class=muted>(enclosing scope)</span>"
    };
    let _ = write!(o, "<div class=pos>{}{own}</div>", esc(pos));
    let snippet = match &a.code {
        Some(c) => Some(c.clone()),
        None => sources.snippet(pos),
    };
    if let Some(code) = snippet {
        if super::sources::split_position(pos).map(|(u, ..)| u) != Some(code.url.as_str()) {
            let _ = write!(
                o,
                "<div class='pos muted'>{}:{}:{}</div>",
                esc(&code.url),
                code.line,
                code.col
            );
        }
        o.push_str("<pre class=src>");
        for l in &code.lines {
            let cls = if l.line == code.line {
                " class=hit"
            } else {
                ""
            };
            let _ = writeln!(o, "<span{cls}>{:>5} {}</span>", l.line, esc(&l.text));
        }
        o.push_str("</pre>");
    }
    o
}

/// The happens-before neighbourhood of two actions as an SVG drawing.
fn neighbourhood_svg(
    an: &Analysis,
    succ: &Successors,
    trace: &shepherd_trace::Trace,
    a: u32,
    b: u32,
) -> String {
    let g = &an.graph;
    let mut nodes: BTreeSet<u32> = [a, b].into_iter().collect();
    for &v in &[a, b] {
        for p in g.preds(v).collect::<Vec<_>>().into_iter().rev().take(3) {
            nodes.insert(p);
            if let Some(pp) = g.preds(p).last() {
                nodes.insert(pp);
            }
        }
        for &s in succ.of(v).iter().take(3) {
            nodes.insert(s);
        }
    }
    let nodes: Vec<u32> = nodes.into_iter().take(16).collect();
    let idx: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    // Layers by longest path inside the drawn subgraph (ids are a topological order).
    let mut layer = vec![0usize; nodes.len()];
    for (i, &v) in nodes.iter().enumerate() {
        for p in g.preds(v) {
            if let Some(&j) = idx.get(&p) {
                layer[i] = layer[i].max(layer[j] + 1);
            }
        }
    }
    let mut rows: BTreeMap<usize, usize> = BTreeMap::new();
    let mut xy = vec![(0usize, 0usize); nodes.len()];
    for i in 0..nodes.len() {
        let r = rows.entry(layer[i]).or_default();
        xy[i] = (20 + layer[i] * 170, 20 + *r * 56);
        *r += 1;
    }
    let w = 20 + (layer.iter().max().copied().unwrap_or(0) + 1) * 170;
    let h = 50 + rows.values().max().copied().unwrap_or(1) * 56;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' class=hb>\
         <defs><marker id=ah viewBox='0 0 10 10' refX=10 refY=5 markerWidth=7 markerHeight=7 orient=auto>\
         <path d='M0,0 L10,5 L0,10 z' fill='#555'/></marker></defs>"
    );
    for (i, &v) in nodes.iter().enumerate() {
        for arc in g.arcs_into(v) {
            if let Some(&j) = idx.get(&arc.tail) {
                let (x1, y1) = (xy[j].0 + 130, xy[j].1 + 18);
                let (x2, y2) = (xy[i].0, xy[i].1 + 18);
                let dash = if arc.origin.derived() {
                    " stroke-dasharray='4 3'"
                } else {
                    ""
                };
                let _ = write!(
                    o,
                    "<line x1={x1} y1={y1} x2={x2} y2={y2} stroke='#555'{dash} marker-end='url(#ah)'><title>{}</title></line>",
                    arc.origin.name()
                );
            }
        }
    }
    if let (Some(&i), Some(&j)) = (idx.get(&a), idx.get(&b)) {
        let _ = write!(
            o,
            "<path d='M{} {} C {} {} {} {} {} {}' stroke='#c00' fill='none' stroke-dasharray='6 4'><title>race</title></path>",
            xy[i].0 + 65,
            xy[i].1 + 36,
            xy[i].0 + 65,
            xy[i].1 + 60,
            xy[j].0 + 65,
            xy[j].1 + 60,
            xy[j].0 + 65,
            xy[j].1 + 36
        );
    }
    for (i, &v) in nodes.iter().enumerate() {
        let act = trace.actions.get(v as usize);
        let kind = act.map(|x| trace.strings.get(x.kind)).unwrap_or("");
        let stable = act.map(|x| trace.strings.get(x.stable)).unwrap_or("");
        let fill = if v == a || v == b {
            "#fde2e2"
        } else {
            "#eef2f7"
        };
        let _ = write!(
            o,
            "<g><title>{}</title><rect x={} y={} width=130 height=36 rx=6 fill='{fill}' stroke='#667'/>\
             <text x={} y={} font-size=12>#{v} {}</text></g>",
            esc(stable),
            xy[i].0,
            xy[i].1,
            xy[i].0 + 6,
            xy[i].1 + 22,
            esc(&kind.chars().take(14).collect::<String>())
        );
    }
    o.push_str("</svg>");
    o
}

/// What every race block needs.
struct Ctx<'a> {
    an: &'a Analysis,
    succ: Successors,
    trace: &'a shepherd_trace::Trace,
    sources: &'a dyn SourceProvider,
}

fn race_block(r: &RaceView, cx: &Ctx<'_>) -> String {
    let sources = cx.sources;
    let mut o = String::new();
    let _ = write!(
        o,
        "<div class=race id=race{}><div class=head>race {} <b>{}</b> — {}</div><div class=sides>",
        r.id,
        r.id,
        esc(&r.kind),
        esc(r.coverage)
    );
    for (label, a) in [("first", &r.first), ("second", &r.second)] {
        let _ = write!(
            o,
            "<div class=side><div><b>{label}</b>: {} in #{} {} <span class=muted>{}</span>{}</div>{}</div>",
            a.access,
            a.action,
            esc(&a.action_kind),
            esc(&a.stable),
            a.value
                .as_deref()
                .map(|v| format!(" value <code>{}</code>", esc(v)))
                .unwrap_or_default(),
            source_block(a, sources)
        );
    }
    o.push_str("</div>");
    if !r.repaired_by.is_empty() {
        let _ = write!(
            o,
            "<div class=muted>ordered by policy: <b>{}</b></div>",
            esc(&r.repaired_by.join(", "))
        );
    }
    o.push_str(&neighbourhood_svg(
        cx.an,
        &cx.succ,
        cx.trace,
        r.first.action,
        r.second.action,
    ));
    o.push_str("</div>");
    o
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px;text-align:left}\
.loc{border:1px solid #ccc;border-radius:6px;margin:1.2em 0;padding:.6em 1em}\
.loc.harmful{border-color:#c00;background:#fff6f6}.loc.filtered{opacity:.85}\
.tag{display:inline-block;background:#eee;border-radius:4px;padding:0 6px;margin-right:4px;font-size:12px}\
.tag.bad{background:#fbb}.race{margin:.8em 0;padding-top:.5em;border-top:1px dashed #ddd}\
.sides{display:flex;gap:1.5em;flex-wrap:wrap}.side{flex:1;min-width:20em}\
pre.src{background:#f6f8fa;padding:6px;overflow:auto}pre.src .hit{background:#fff3b0;display:block}\
.muted{color:#777}.pos{font-family:monospace;font-size:12px}svg.hb{margin-top:.5em}";

/// Renders the whole page. The report should include covered races (`all`) so they can be
/// folded under their covering race.
pub fn render(
    r: &RaceReport,
    an: &Analysis,
    trace: &shepherd_trace::Trace,
    sources: &dyn SourceProvider,
) -> String {
    let cx = Ctx {
        an,
        succ: an.graph.successors(),
        trace,
        sources,
    };
    let mut o = String::new();
    let title = r.trace.page.as_deref().unwrap_or("trace");
    let _ = write!(
        o,
        "<!doctype html><html><head><meta charset=utf-8><title>Races: {}</title><style>{STYLE}</style></head><body>",
        esc(title)
    );
    let _ = write!(
        o,
        "<h1>Races in {}</h1><p>{} actions, {} arcs, {} chains; {} races, {} uncovered.</p>",
        esc(title),
        r.trace.actions,
        r.trace.arcs,
        r.trace.chains,
        r.summary.races,
        r.summary.uncovered
    );
    let l = &r.summary.locations;
    o.push_str("<h2>Locations per filter level</h2><table><tr><th>level</th><th>meaning</th><th>locations</th></tr>");
    for (lvl, name, meaning, n) in [
        (
            5,
            "harmful",
            "initialization or readyStateChange race",
            l.harmful,
        ),
        (
            4,
            "uncovered",
            "uncovered races, no filter applies",
            l.uncovered,
        ),
        (
            3,
            "filtered",
            "uncovered races explained by a harmless filter",
            l.filtered,
        ),
        (
            2,
            "only covered",
            "all races covered by other races",
            l.only_covered,
        ),
        (
            1,
            "no races",
            "accesses that could race, but do not",
            l.no_races,
        ),
        (
            0,
            "too few accesses",
            "fewer than two accesses or no write",
            l.too_few_accesses,
        ),
    ] {
        let _ = write!(
            o,
            "<tr><td>{lvl} {name}</td><td>{meaning}</td><td>{n}</td></tr>"
        );
    }
    o.push_str("</table>");
    if !r.summary.tags.is_empty() {
        o.push_str("<p>Tags: ");
        for (t, n) in &r.summary.tags {
            let _ = write!(o, "<span class=tag>{} × {n}</span>", esc(t));
        }
        o.push_str("</p>");
    }

    // Covered races grouped under their witness.
    let mut folded: HashMap<usize, Vec<&RaceView>> = HashMap::new();
    let mut orphans: Vec<&RaceView> = Vec::new();
    for race in r.races.iter().filter(|x| x.covered) {
        match race.covered_by {
            Some(w) => folded.entry(w).or_default().push(race),
            None => orphans.push(race),
        }
    }
    let total = r.races.iter().filter(|x| !x.covered).count();
    if total > MAX_RACES {
        let _ = write!(
            o,
            "<p><b>{total} uncovered races; the first {MAX_RACES} are shown</b> (harmful first). \
             Use <code>--json</code> for all of them.</p>"
        );
    }
    let shown: Vec<&RaceView> = r
        .races
        .iter()
        .filter(|x| !x.covered)
        .take(MAX_RACES)
        .collect();
    let covered_under = |o: &mut String, race: &RaceView| {
        if let Some(cov) = folded.get(&race.id) {
            let _ = write!(
                o,
                "<details><summary>{} race(s) covered by race {}</summary>",
                cov.len(),
                race.id
            );
            for c in cov.iter().take(FOLDED_PER_RACE) {
                let _ = write!(
                    o,
                    "<div class=muted>on <code>{}</code></div>",
                    esc(&c.location)
                );
                o.push_str(&race_block(c, &cx));
            }
            o.push_str("</details>");
        }
    };
    let mut i = 0;
    while i < shown.len() {
        let loc = shown[i].location.as_str();
        let end = shown[i..]
            .iter()
            .position(|x| x.location != loc)
            .map_or(shown.len(), |k| i + k);
        let group = &shown[i..end];
        let first = group[0];
        let _ = write!(
            o,
            "<div class='loc {}'><h3><code>{}</code> ",
            first.level,
            esc(&first.location)
        );
        for t in &first.tags {
            let bad = if t.contains("INITIALIZATION") || t.contains("READYSTATE") {
                " bad"
            } else {
                ""
            };
            let _ = write!(o, "<span class='tag{bad}'>{}</span>", esc(t));
        }
        let _ = write!(
            o,
            "</h3><div class=muted>{}</div>",
            esc(&reason(&first.tags, false))
        );
        // A race the explorer repeated (same kind and places, other events) is drawn once;
        // the repeats are listed under it.
        for (k, repeats) in group_repeats(group) {
            let race = group[k];
            o.push_str(&race_block(race, &cx));
            covered_under(&mut o, race);
            if !repeats.is_empty() {
                let _ = write!(
                    o,
                    "<details><summary>{} more like race {} (same places, other events)</summary><ul>",
                    repeats.len(),
                    race.id
                );
                for &j in &repeats {
                    let x = group[j];
                    let _ = write!(
                        o,
                        "<li id=race{}>race {}: #{} {} <span class=muted>{}</span> → #{} {} <span class=muted>{}</span>",
                        x.id,
                        x.id,
                        x.first.action,
                        esc(&x.first.action_kind),
                        esc(&x.first.stable),
                        x.second.action,
                        esc(&x.second.action_kind),
                        esc(&x.second.stable)
                    );
                    covered_under(&mut o, x);
                    o.push_str("</li>");
                }
                o.push_str("</ul></details>");
            }
        }
        o.push_str("</div>");
        i = end;
    }
    if !orphans.is_empty() && total <= MAX_RACES {
        let _ = write!(
            o,
            "<details><summary>{} other covered race(s)</summary>",
            orphans.len()
        );
        for c in orphans.iter().take(MAX_RACES) {
            let _ = write!(
                o,
                "<div class=muted>on <code>{}</code></div>",
                esc(&c.location)
            );
            o.push_str(&race_block(c, &cx));
        }
        o.push_str("</details>");
    }
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(esc("<a href=\"x\">"), "&lt;a href=&quot;x&quot;&gt;");
    }
}
