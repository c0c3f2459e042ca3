//! One static, self-contained HTML page: counts per filter level, each location's races with
//! the source lines of both accesses (when a [`SourceProvider`] has the script text), the
//! happens-before neighbourhood of both actions as inline SVG (laid out here: layers by
//! longest path, no external tools), and covered races folded under the race covering them.

use super::{AccessView, NodeNames, RaceReport, RaceView, SourceProvider, group_repeats, reason};
use crate::Analysis;
use crate::graph::Successors;

/// Most uncovered races drawn (each with its sources and graph); the rest are counted.
const MAX_RACES: usize = 2_000;
/// Most covered races drawn under one covering race.
const FOLDED_PER_RACE: usize = 50;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

/// `s` escaped for HTML text and for attribute values in either quotes (other reports reuse
/// it): `&`, `<`, `>`, `"` and `'` (written `&#x27;`).
pub fn esc(s: &str) -> String {
    html_escape::encode_quoted_attribute(s).into_owned()
}

/// The location as a developer finds it, then the trace's own name (which keeps nodes that
/// share a selector apart), the node's classes in the tooltip.
fn location_html(r: &RaceView) -> String {
    let title = match r.node.as_ref().and_then(|n| n.classes.as_deref()) {
        Some(c) => format!(" title='classes: {}'", esc(c)),
        None => String::new(),
    };
    let mut o = format!("<code{title}>{}</code>", esc(&r.location_name));
    if r.location_name != r.location {
        let _ = write!(
            o,
            " <span class='muted raw' title='name in the trace'>{}</span>",
            esc(&r.location)
        );
    }
    o
}

/// `text` escaped, with the token that starts at character `caret` (the access's column)
/// marked, so it stands out even in a long minified line (which wraps).
fn marked(text: &str, caret: Option<usize>) -> String {
    let Some(c) = caret else {
        return esc(text);
    };
    let chars: Vec<char> = text.chars().collect();
    if c >= chars.len() {
        return esc(text);
    }
    let word = |ch: &char| ch.is_alphanumeric() || matches!(ch, '_' | '$' | '.');
    let len = chars[c..].iter().take_while(|ch| word(ch)).count().max(1);
    let part = |r: std::ops::Range<usize>| esc(&chars[r].iter().collect::<String>());
    format!(
        "{}<mark class=at>{}</mark>{}",
        part(0..c),
        part(c..c + len),
        part(c + len..chars.len())
    )
}

fn source_block(a: &AccessView, sources: &dyn SourceProvider) -> String {
    let mut o = String::new();
    let Some(pos) = &a.source else {
        let _ = write!(
            o,
            "<div class=src muted>no source position{}</div>",
            a.scope_name
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
            if l.line == code.line {
                // A block of its own: a newline after it would show as an empty line.
                let _ = write!(
                    o,
                    "<span class=hit>{:>5} {}</span>",
                    l.line,
                    // The enclosing scope's position says where its code starts, not what
                    // raced: nothing to mark.
                    marked(&l.text, code.caret.filter(|_| a.access_source.is_some()))
                );
            } else {
                let _ = writeln!(o, "<span>{:>5} {}</span>", l.line, esc(&l.text));
            }
        }
        o.push_str("</pre>");
    }
    o
}

/// Characters per line in a happens-before box (longer names wrap).
const BOX_CHARS: usize = 34;
/// Most lines of an action's label in a box (the tooltip has all of it).
const BOX_LABEL_LINES: usize = 3;
/// Advance of one character of the boxes' 12px monospace font, rounded up.
const CHAR_W: f64 = 7.4;
const LINE_H: usize = 15;
const BOX_MIN_W: usize = 130;
const COL_GAP: usize = 40;
const ROW_GAP: usize = 20;

/// `s` cut into lines of at most `width` characters, breaking after a space in the last two
/// thirds of a line if there is one, else after `/`, `?`, `&` or `>` in its second half, else
/// after `:` there, else at the width.
fn wrap(s: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut lines = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let mut end = (i + width).min(chars.len());
        if end < chars.len() {
            let after = |from: usize, set: &[char]| {
                (i + from..end).rev().find(|&k| set.contains(&chars[k]))
            };
            if let Some(k) = after(width / 3, &[' '])
                .or_else(|| after(width / 2, &['/', '?', '&', '>']))
                .or_else(|| after(width / 2, &[':']))
            {
                end = k + 1;
            }
        }
        lines.push(
            chars[i..end]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_owned(),
        );
        i = end;
        while chars.get(i) == Some(&' ') {
            i += 1;
        }
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

/// The first scope label of action `v` that says what it runs (`fire:click @ …`,
/// `script:inline #1`), with its event target named.
fn action_label(trace: &shepherd_trace::Trace, names: &NodeNames, v: u32) -> Option<String> {
    let label = trace.ops_of(v).iter().find_map(|o| match o {
        shepherd_trace::Op::Enter { scope, .. } => {
            let l = trace.strings.get(*scope);
            (!l.starts_with("auto:")).then_some(l)
        }
        _ => None,
    })?;
    Some(names.label(label).unwrap_or_else(|| label.to_owned()))
}

/// One box of the drawing: its text lines (the first is `#id kind`), tooltip and size.
struct HbBox {
    lines: Vec<String>,
    title: String,
    w: usize,
    h: usize,
}

fn hb_box(trace: &shepherd_trace::Trace, names: &NodeNames, v: u32) -> HbBox {
    let act = trace.actions.get(v as usize);
    let kind = act.map(|x| trace.strings.get(x.kind)).unwrap_or("");
    let stable = act.map(|x| trace.strings.get(x.stable)).unwrap_or("");
    let head = format!("#{v} {kind}");
    let mut lines = wrap(&head, BOX_CHARS);
    let label = action_label(trace, names, v);
    if let Some(l) = &label {
        let mut ls = wrap(l, BOX_CHARS);
        if ls.len() > BOX_LABEL_LINES {
            ls.truncate(BOX_LABEL_LINES);
            if let Some(last) = ls.last_mut() {
                let keep: String = last.chars().take(BOX_CHARS - 1).collect();
                *last = keep + "…";
            }
        }
        lines.extend(ls);
    }
    let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let w = BOX_MIN_W.max((chars as f64 * CHAR_W).ceil() as usize + 14);
    let h = 12 + lines.len() * LINE_H;
    let mut title = head;
    for part in [label.as_deref(), Some(stable)].into_iter().flatten() {
        if !part.is_empty() {
            title.push('\n');
            title.push_str(part);
        }
    }
    HbBox { lines, title, w, h }
}

/// The happens-before neighbourhood of two actions as an SVG drawing: one column per layer
/// (longest path inside the drawn subgraph), boxes as wide as their names.
fn neighbourhood_svg(
    an: &Analysis,
    succ: &Successors,
    trace: &shepherd_trace::Trace,
    names: &NodeNames,
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
    let boxes: Vec<HbBox> = nodes.iter().map(|&v| hb_box(trace, names, v)).collect();
    let layers = layer.iter().max().map_or(0, |m| m + 1);
    let mut col_w = vec![0usize; layers];
    for (i, bx) in boxes.iter().enumerate() {
        col_w[layer[i]] = col_w[layer[i]].max(bx.w);
    }
    let mut col_x = vec![20usize; layers];
    for l in 1..layers {
        col_x[l] = col_x[l - 1] + col_w[l - 1] + COL_GAP;
    }
    let mut col_y = vec![20usize; layers];
    let mut xy = vec![(0usize, 0usize); nodes.len()];
    for (i, bx) in boxes.iter().enumerate() {
        xy[i] = (col_x[layer[i]], col_y[layer[i]]);
        col_y[layer[i]] += bx.h + ROW_GAP;
    }
    let w = col_x
        .last()
        .zip(col_w.last())
        .map_or(40, |(x, cw)| x + cw + 20);
    // Room below the lowest box for the race curve.
    let h = col_y.iter().max().copied().unwrap_or(20) + 30;
    let mut o = String::new();
    let _ = write!(
        o,
        "<div class=hb><svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}'>\
         <defs><marker id=ah viewBox='0 0 10 10' refX=10 refY=5 markerWidth=7 markerHeight=7 orient=auto>\
         <path d='M0,0 L10,5 L0,10 z' fill='#555'/></marker></defs>"
    );
    let mid = |i: usize| xy[i].1 + boxes[i].h / 2;
    for (i, &v) in nodes.iter().enumerate() {
        for arc in g.arcs_into(v) {
            if let Some(&j) = idx.get(&arc.tail) {
                let (x1, y1) = (xy[j].0 + boxes[j].w, mid(j));
                let (x2, y2) = (xy[i].0, mid(i));
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
        let bottom = |k: usize| (xy[k].0 + boxes[k].w / 2, xy[k].1 + boxes[k].h);
        let ((x1, y1), (x2, y2)) = (bottom(i), bottom(j));
        let low = y1.max(y2) + 22;
        let _ = write!(
            o,
            "<path d='M{x1} {y1} C {x1} {low} {x2} {low} {x2} {y2}' stroke='#c00' fill='none' stroke-dasharray='6 4'><title>race</title></path>"
        );
    }
    for (i, &v) in nodes.iter().enumerate() {
        let bx = &boxes[i];
        let fill = if v == a || v == b {
            "#fde2e2"
        } else {
            "#eef2f7"
        };
        let (x, y) = xy[i];
        let _ = write!(
            o,
            "<g><title>{}</title><rect x={x} y={y} width={} height={} rx=6 fill='{fill}' stroke='#667'/>\
             <text x={} y={} font-family=monospace font-size=12>",
            esc(&bx.title),
            bx.w,
            bx.h,
            x + 7,
            y + 6,
        );
        for (k, line) in bx.lines.iter().enumerate() {
            // The first line names the action; the rest is its label, in grey.
            let fill = if k == 0 { "" } else { " fill='#456'" };
            let _ = write!(
                o,
                "<tspan x={} dy={LINE_H}{fill}>{}</tspan>",
                x + 7,
                esc(line)
            );
        }
        o.push_str("</text></g>");
    }
    o.push_str("</svg></div>");
    o
}

/// What every race block needs.
struct Ctx<'a> {
    an: &'a Analysis,
    succ: Successors,
    trace: &'a shepherd_trace::Trace,
    names: NodeNames,
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
    if let Some(x) = &r.explored {
        let bad = if x.verdict == "harmful" { " bad" } else { "" };
        let _ = write!(
            o,
            "<div>explored: <span class=\"tag{bad}\">{}</span> {}</div>",
            esc(&x.verdict),
            esc(&x.reason)
        );
    }
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
        &cx.names,
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
pre.src{background:#f6f8fa;padding:6px;overflow:auto}\
pre.src .hit{background:#fff3b0;display:block;white-space:pre-wrap;word-break:break-all}\
mark.at{background:#f7b2b2;outline:1px solid #c00}\
.muted{color:#777}.pos{font-family:monospace;font-size:12px}div.hb{margin-top:.5em;overflow-x:auto}\
.raw{font-family:monospace;font-size:12px;font-weight:normal}";

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
        names: NodeNames::new(trace),
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
    if let Some(e) = &r.summary.exercised {
        let _ = write!(
            o,
            "<p>Exercised: {} of {} controls.",
            e.exercised, e.controls
        );
        if !e.missed.is_empty() {
            o.push_str(" Never exercised (their races are not in the trace): ");
            let names: Vec<String> = e
                .missed
                .iter()
                .map(|m| format!("<code>{}</code>", esc(&m.name)))
                .collect();
            o.push_str(&names.join(", "));
        }
        o.push_str("</p>");
    }
    if !r.summary.policies_undecided.is_empty() {
        let _ = write!(
            o,
            "<p class=muted>Repair policies not worked out (the trace is too long for the \
             simulation's budget; <code>shepherd policy covers --policy NAME</code> has none): {}</p>",
            esc(&r.summary.policies_undecided.join(", "))
        );
    }
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
                let _ = write!(o, "<div class=muted>on {}</div>", location_html(c));
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
            "<div class='loc {}'><h3>{} ",
            first.level,
            location_html(first)
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
            let _ = write!(o, "<div class=muted>on {}</div>", location_html(c));
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
    fn long_names_wrap_at_natural_breaks() {
        assert_eq!(
            wrap("fire:click @ #todo-list > li:nth-child(1) > input", 40),
            ["fire:click @ #todo-list >", "li:nth-child(1) > input"]
        );
        assert_eq!(
            wrap("https://a.test/assets/vendor/app.min.js?v=12", 40),
            ["https://a.test/assets/vendor/app.min.js?", "v=12"]
        );
        assert_eq!(
            wrap("script:external https://a.test/app.min.js", 40),
            ["script:external", "https://a.test/app.min.js"]
        );
        assert_eq!(wrap("event:selectionchange", 40), ["event:selectionchange"]);
        // No break character: cut at the width.
        let long = "x".repeat(90);
        assert_eq!(
            wrap(&long, 40).iter().map(String::len).collect::<Vec<_>>(),
            [40, 40, 10]
        );
        assert_eq!(wrap("", 40), [""]);
    }

    #[test]
    fn the_column_token_is_marked() {
        assert_eq!(
            marked("a=C.value;b<c", Some(2)),
            "a=<mark class=at>C.value</mark>;b&lt;c"
        );
        assert_eq!(marked("x<y", Some(1)), "x<mark class=at>&lt;</mark>y");
        assert_eq!(marked("ab", Some(2)), "ab");
        assert_eq!(marked("a<b", None), "a&lt;b");
    }

    #[test]
    fn escapes() {
        assert_eq!(esc("<a href=\"x\">"), "&lt;a href=&quot;x&quot;&gt;");
        assert_eq!(esc("it's & 1 > 0"), "it&#x27;s &amp; 1 &gt; 0");
        assert_eq!(esc("é → 🦀"), "é → 🦀");
    }

    /// The escaping before html-escape: its bytes differ only in how `'` is written
    /// (`&#39;`, now `&#x27;`: the same character reference), so every report decodes to the
    /// same text.
    #[test]
    fn escapes_as_before_but_for_the_spelling_of_the_apostrophe() {
        fn old(s: &str) -> String {
            let mut o = String::new();
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
        let mut samples: Vec<String> = (0u8..128).map(|b| char::from(b).to_string()).collect();
        samples.push("if (a < b && c > 'd') { e = \"f\"; } // &amp; é 🦀".into());
        samples.push("'&#39;'".into());
        for s in &samples {
            assert_eq!(esc(s), old(s).replace("&#39;", "&#x27;"), "{s:?}");
            assert_eq!(html_escape::decode_html_entities(&esc(s)), s.as_str());
            assert_eq!(html_escape::decode_html_entities(&old(s)), s.as_str());
        }
    }
}
