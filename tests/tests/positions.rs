//! Source positions end to end (record mode, the full pipeline: HTML rewriter, JS pass, runtime):
//! a page with an inline script, an external script, an `onclick` handler and a timer racing on
//! a global. Every logged access carries `url:line:col` pointing at the line of the original
//! source that made it, and the race report (what `shepherd races --html` renders) shows those
//! lines — for inline code, the HTML document's own line numbers.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, ensure};
// The instrumenter's inline-code finder in the reports' terms (what the CLI wires in).
use shepherd_analysis::page_texts::inline_finder;
use shepherd_e2e::{Case, TraceQuery, case, pages_dir, run_cases};
use shepherd_instrument_js::script_key;
use shepherd_races::report::{self, PageSources, RaceReport};
use shepherd_races::{Options, analyze};
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[(
        "accesses_carry_positions_and_reports_show_lines",
        accesses_carry_positions_and_reports_show_lines,
    )];
    run_cases(Mode::Record, cases)
}

/// The inline code of `tests/pages/positions/index.html`, as the HTML rewriter hands it to the
/// JS pass (the key of a position is the sha256 prefix of exactly this text).
const INLINE1: &str =
    "\n  var counter = 0;\n  function bump() {\n    counter = counter + 1;\n  }\n";
const HANDLER: &str = "bump(); window.seen = counter;";
const INLINE2: &str = "\n  setTimeout(function () { counter = 10; }, 0);\n";
const MODULE: &str = "window.fromModule = counter;";

/// Positions of the accesses of `a` matching (write, location).
fn positions(t: &TraceQuery, a: u32, write: bool, loc: &str) -> Vec<String> {
    t.accesses(a)
        .into_iter()
        .filter(|x| x.write == write && x.loc == loc)
        .map(|x| x.pos.unwrap_or_else(|| "<none>".into()))
        .collect()
}

/// Checks that the one position of (a, write, loc) is on `line` of `url`.
fn at_line(
    t: &TraceQuery,
    a: u32,
    write: bool,
    loc: &str,
    url: &str,
    line: u32,
) -> anyhow::Result<()> {
    let ps = positions(t, a, write, loc);
    let want = format!("{url}:{line}:");
    ensure!(
        ps.len() == 1 && ps[0].starts_with(&want) && ps[0][want.len()..].parse::<u32>().is_ok(),
        "action {a} {} {loc}: want one position {want}<col>, got {ps:?}\n{}",
        if write { "write" } else { "read" },
        t.dump()
    );
    Ok(())
}

case!(
    accesses_carry_positions_and_reports_show_lines,
    |h| async move {
        let r = async {
            let page = h.open("/positions/").await?;
            page.click("#b").await?;
            h.wait_for(&page, "window.seen !== undefined", Duration::from_secs(2))
                .await?;
            let t = h.flushed_trace(&page).await?;
            let _ = page.close().await;
            anyhow::Ok(t)
        }
        .await;
        let t = r?;
        let doc = h.origin.url("/positions/");
        let app = h.origin.url("/positions/app.js");
        let inline = |text: &str| format!("{doc}#inline-{:x}", script_key(text));
        let (inline1, handler, inline2) = (inline(INLINE1), inline(HANDLER), inline(INLINE2));
        let module = inline(MODULE);

        // First inline script: `var counter = 0;` is line 2 of its text, `function bump` line 3.
        let s1 = t.first_with_scope("script:inline")?;
        at_line(&t, s1, true, "Global.counter", &inline1, 2)?;
        at_line(&t, s1, true, "Global.bump", &inline1, 3)?;
        // External script: its own URL and lines.
        let ext = t.first_with_scope("script:external")?;
        at_line(&t, ext, true, "Global.label", &app, 2)?;
        at_line(&t, ext, false, "Global.counter", &app, 3)?;
        // An inline module is inline code too (not its import.meta.url, the document's URL).
        let m = t.first_with_scope("script:module")?;
        at_line(&t, m, false, "Global.counter", &module, 1)?;
        at_line(&t, m, true, "Global.fromModule", &module, 1)?;
        // The click: the handler's read of `bump` (line 1 of the attribute value), and bump()'s
        // update of `counter` (line 4 of the first inline script, where bump is defined).
        let click = t.first_with_scope("fire:click @ BUTTON[")?;
        at_line(&t, click, false, "Global.bump", &handler, 1)?;
        at_line(&t, click, false, "Global.counter", &inline1, 4)?;
        at_line(&t, click, true, "Global.counter", &inline1, 4)?;
        at_line(&t, click, true, "Global.seen", &handler, 1)?;
        // The timer set by the second inline script writes on line 2 of that script's text.
        let timer = t
            .accessing(|x| x.write && x.loc == "Global.counter" && x.value.as_deref() == Some("10"))
            .first()
            .map(|(a, _)| *a)
            .ok_or_else(|| anyhow!("no timer write of counter\n{}", t.dump()))?;
        at_line(&t, timer, true, "Global.counter", &inline2, 2)?;

        // The report shows both racing lines, in the document's numbering.
        let page_html = std::fs::read_to_string(pages_dir().join("positions/index.html"))?;
        let app_js = std::fs::read_to_string(pages_dir().join("positions/app.js"))?;
        let sources = PageSources::new(HashMap::from([(doc.clone(), page_html), (app, app_js)]))
            .with_inline_finder(inline_finder);
        let an = analyze(&t.trace, &Options::default())?;
        let mut rep = RaceReport::new(&t.trace, &an, false);
        rep.attach_sources(&sources);
        let race = rep
            .races
            .iter()
            .find(|r| {
                r.location == "Global.counter"
                    && [r.first.action, r.second.action].contains(&timer)
                    && [r.first.action, r.second.action].contains(&click)
            })
            .ok_or_else(|| {
                anyhow!(
                    "no race between the click and the timer on counter\n{}",
                    report::text::render(&rep)
                )
            })?;
        let lines: Vec<(usize, String)> = [&race.first, &race.second]
            .iter()
            .filter_map(|a| a.code.as_ref())
            .map(|c| (c.line, c.hit().unwrap_or("").to_string()))
            .collect();
        let mut want = vec![
            (7, "    counter = counter + 1;".to_string()),
            (
                15,
                "  setTimeout(function () { counter = 10; }, 0);".to_string(),
            ),
        ];
        let mut got = lines.clone();
        got.sort();
        want.sort();
        ensure!(got == want, "source lines of the race: {lines:?}");
        let text = report::text::render(&rep);
        ensure!(
            text.contains("    7 |     counter = counter + 1;")
                && text.contains("   15 |   setTimeout(function () { counter = 10; }, 0);"),
            "text report:\n{text}"
        );
        let full = RaceReport::new(&t.trace, &an, true);
        let html = report::html::render(&full, &an, &t.trace, &sources);
        // The hit lines, with the accessed name marked at the access's column.
        let plain = html.replace("<mark class=at>", "").replace("</mark>", "");
        for hit in [
            "<span class=hit>    7     counter = counter + 1;</span>",
            "<span class=hit>   15   setTimeout(function () { counter = 10; }, 0);</span>",
        ] {
            ensure!(plain.contains(hit), "HTML report lacks {hit}");
        }
        ensure!(
            html.contains("<mark class=at>counter</mark>"),
            "HTML report marks no access"
        );
        Ok(())
    }
);
