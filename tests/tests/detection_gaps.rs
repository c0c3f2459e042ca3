//! Races that third-party race test pages demonstrate and that the detector used to miss or
//! misreport (record mode, the full pipeline, then the analysis): a node's children as a
//! location, radio groups, `selectedIndex`, an initialisation race the run itself hit, and the
//! position of a late listener registration.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, ensure};
use shepherd_browser::Page;
use shepherd_e2e::{Case, Harness, TraceQuery, case, run_cases};
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        (
            "appends_in_arrival_order_race",
            appends_in_arrival_order_race,
        ),
        (
            "every_mutation_writes_the_child_list",
            every_mutation_writes_the_child_list,
        ),
        (
            "radio_group_and_select_defaults_race_with_the_user",
            radio_group_and_select_defaults_race_with_the_user,
        ),
        (
            "initialization_race_in_the_recorded_order",
            initialization_race_in_the_recorded_order,
        ),
        (
            "late_listener_race_points_at_the_registration",
            late_listener_race_points_at_the_registration,
        ),
    ];
    run_cases(Mode::Record, cases)
}

/// Opens `path`, runs `act` on the page, waits until `ready` holds and returns the trace.
async fn record_with<F, Fut>(
    h: &Harness,
    path: &str,
    act: F,
    ready: &str,
) -> anyhow::Result<TraceQuery>
where
    F: FnOnce(Page) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Page>>,
{
    let page = act(h.open(path).await?).await?;
    let t = h.trace_when(&page, ready, Duration::from_secs(4)).await;
    let _ = page.close().await;
    t
}

/// `DOMNode[<oid>]` of the element with id `id` (from the id map write that attached it).
fn node(t: &TraceQuery, id: &str) -> anyhow::Result<String> {
    t.accessing(|x| x.write && x.loc == format!("Tree[1]:{id}"))
        .into_iter()
        .find_map(|(_, x)| x.value.filter(|v| v.starts_with("DOMNode[")))
        .ok_or_else(|| anyhow!("no element #{id}\n{}", t.dump()))
}

fn child_list(t: &TraceQuery, id: &str) -> anyhow::Result<String> {
    Ok(format!("{}.childList", node(t, id)?))
}

case!(appends_in_arrival_order_race, |h| async move {
    let t = record_with(
        &h,
        "/sources/childlist/",
        |p| async move { Ok(p) },
        "document.getElementById('list').children.length === 2",
    )
    .await?;
    let list = child_list(&t, "list")?;
    let races = t.uncovered_on(&list)?;
    let doc = h.origin.url("/sources/childlist/");
    ensure!(
        races.iter().any(|r| r.kind == "WRITE-WRITE"
            && r.level != "filtered"
            && [&r.first, &r.second].iter().all(|a| a
                .access_source
                .as_deref()
                .is_some_and(|s| s.starts_with(&format!("{doc}#inline-"))
                    && s.split(':').rev().nth(1) == Some("6")))),
        "the two appends race, each at `list.appendChild(li)` (line 6 of the script):\n{}",
        t.races_text(|l| l.ends_with(".childList"))
    );
    Ok(())
});

case!(every_mutation_writes_the_child_list, |h| async move {
    let t = record_with(
        &h,
        "/sources/childlist/",
        |p| async move { Ok(p) },
        "document.getElementById('para').innerHTML !== ''",
    )
    .await?;
    let apis = t
        .of_kind("timer")
        .into_iter()
        .find(|&a| t.scope(a).is_some())
        .context("the timer that mutates")?;
    for id in ["box", "panel", "para"] {
        let loc = child_list(&t, id)?;
        let w = t
            .accesses(apis)
            .into_iter()
            .find(|x| x.write && x.loc == loc)
            .ok_or_else(|| anyhow!("#{id}'s child list not written\n{}", t.dump()))?;
        ensure!(
            w.pos.is_some(),
            "#{id}: the write carries the call's position: {w:?}\n{}",
            t.dump()
        );
    }
    // `<b>` inserted, `#old` removed, text appended and prepended: one location, with the
    // first call's position (insertBefore, line 14 of the script).
    let box_list = child_list(&t, "box")?;
    let box_write = t
        .accesses(apis)
        .into_iter()
        .find(|x| x.write && x.loc == box_list)
        .context("the box's child-list write")?;
    ensure!(
        box_write
            .pos
            .as_deref()
            .and_then(|p| p.split(':').rev().nth(1))
            == Some("14"),
        "{box_write:?}"
    );
    // document.write during parsing writes the children of the script's parent (the body).
    let script = t.one_with_scope("script:inline #1")?;
    let body = t
        .accesses(script)
        .into_iter()
        .find(|x| {
            x.write
                && x.loc.ends_with(".childList")
                && x.value.as_deref().is_some_and(|v| v.contains("written"))
        })
        .ok_or_else(|| anyhow!("document.write's child-list write\n{}", t.dump()))?;
    ensure!(body.pos.is_some(), "{body:?}");
    Ok(())
});

case!(
    radio_group_and_select_defaults_race_with_the_user,
    |h| async move {
        let t = record_with(
            &h,
            "/sources/fields/",
            |p| async move {
                p.click("#large").await?;
                Ok(p)
            },
            "window.inited === true",
        )
        .await?;
        let small = format!("{}.checked", node(&t, "small")?);
        // The user's `input`/`change` on #large write #small's `checked` = false.
        let clicks: Vec<u32> = t
            .accessing(|x| x.write && x.loc == small && x.value.as_deref() == Some("false"))
            .into_iter()
            .map(|(a, _)| a)
            .filter(|&a| t.type_code(a) == 2)
            .collect();
        ensure!(
            !clicks.is_empty(),
            "checking #large unchecks #small\n{}",
            t.dump()
        );
        let text = || t.races_text(|l| l.starts_with("DOMNode["));
        let races = t.uncovered_on(&small)?;
        ensure!(
            races
                .iter()
                .any(|r| clicks.contains(&r.first.action) || clicks.contains(&r.second.action)),
            "the late default of #small races with the click on #large:\n{}",
            text()
        );
        // The user's choice in the select, in a load of its own (user events are ordered: a
        // second one's race with the same script would be covered by the first's).
        let t = record_with(
            &h,
            "/sources/fields/",
            |p| async move {
                p.focus("#color").await?;
                p.press_key("ArrowUp").await?;
                Ok(p)
            },
            "window.inited === true",
        )
        .await?;
        let text = || t.races_text(|l| l.starts_with("DOMNode["));
        let index = format!("{}.selectedIndex", node(&t, "color")?);
        let races = t.uncovered_on(&index)?;
        ensure!(
            !races.is_empty() && races.iter().all(|r| !r.tags.contains(&"NEVER_READ")),
            "the late selectedIndex default against the user's choice is shown:\n{}",
            text()
        );
        Ok(())
    }
);

case!(initialization_race_in_the_recorded_order, |h| async move {
    let t = record_with(
        &h,
        "/fig1/",
        |p| async move { Ok(p) },
        "typeof doSomething === 'function'",
    )
    .await?;
    let races = t.uncovered_on("Global.doSomething")?;
    ensure!(
        races
            .iter()
            .any(|r| r.harmful && r.tags.contains(&"INITIALIZATION_RACE")),
        "the onload handler read doSomething before the script defined it and threw:\n{}",
        t.races_text(|l| l.starts_with("Global."))
    );
    Ok(())
});

case!(
    late_listener_race_points_at_the_registration,
    |h| async move {
        let t = record_with(
            &h,
            "/sources/listeners/",
            |p| async move {
                p.click("#b").await?;
                p.click("#c").await?;
                Ok(p)
            },
            "typeof go === 'function'",
        )
        .await?;
        let late = h.origin.url("/sources/listeners/late.js?delay=300");
        for (id, line) in [("b", "5"), ("c", "7")] {
            let slot = format!(
                "BUTTON[{}].click",
                node(&t, id)?
                    .trim_start_matches("DOMNode[")
                    .trim_end_matches(']')
            );
            // (The click on #c follows the one on #b: its race is covered by #b's.)
            let races = t.races_on(&slot)?;
            let reg = races
                .iter()
                .flat_map(|r| [&r.first, &r.second])
                .find(|a| a.access != "READ")
                .ok_or_else(|| {
                    anyhow!(
                        "no race on {slot}:\n{}",
                        t.races_text(|l| l.contains(".click"))
                    )
                })?;
            let src = reg.source.clone().unwrap_or_default();
            ensure!(
                src.starts_with(&format!("{late}:{line}:")),
                "#{id}: the registration side points at late.js line {line}, not {src:?}:\n{}",
                t.races_text(|l| l.contains(".click"))
            );
        }
        Ok(())
    }
);
