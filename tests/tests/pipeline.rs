//! The full pipeline (HTML rewriter + JS pass + controller) on the papers' races: the racing
//! accesses are in the trace even when the bad order happens.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::ensure;
use serde_json::json;
use shepherd_e2e::{Case, case, run_cases};
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        (
            "fig1_read_of_undefined_global_is_logged",
            fig1_read_of_undefined_global_is_logged,
        ),
        (
            "instrumented_todo_app_behaves",
            instrumented_todo_app_behaves,
        ),
        (
            "user_input_races_with_script_value_write",
            user_input_races_with_script_value_write,
        ),
        (
            "module_and_quiet_scripts_have_actions",
            module_and_quiet_scripts_have_actions,
        ),
    ];
    run_cases(Mode::Record, cases)
}

case!(fig1_read_of_undefined_global_is_logged, |h| async move {
    let r = async {
        let page = h.open("/fig1/").await?;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let t = h.flushed_trace(&page).await?;
        let _ = page.close().await;
        anyhow::Ok(t)
    }
    .await;
    let t = r?;
    let load = t.one_with_scope("fire:load @ IMG[")?;
    // EventRacer's logger missed this read: the handler fails on it, but it happened.
    ensure!(
        t.reads(load, "Global.doSomething"),
        "the onload handler's read of the undefined global\n{}",
        t.dump()
    );
    ensure!(
        t.exceptions(load).iter().any(|m| m.contains("doSomething")),
        "and its ReferenceError"
    );
    // The other side of the race: the declaration in the delayed script.
    let decl = t.accessing(|x| x.write && x.loc == "Global.doSomething");
    ensure!(
        !decl.is_empty(),
        "the script's write of doSomething\n{}",
        t.dump()
    );
    ensure!(decl[0].0 > load, "bad order: declared after the load");
    ensure!(
        !t.hb(load, decl[0].0) && !t.hb(decl[0].0, load),
        "the two are unordered (ordered by nothing but timing)\n{}",
        t.dump()
    );
    Ok(())
});

case!(instrumented_todo_app_behaves, |h| async move {
    let r = async {
        let page = h.open("/todo/").await?;
        let v = page.evaluate("todoWorkload(20)").await?;
        let t = h.flushed_trace(&page).await?;
        let _ = page.close().await;
        anyhow::Ok((v, t))
    }
    .await;
    let (v, t) = r?;
    ensure!(v["left"] == json!(0), "app works instrumented: {v}");
    ensure!(
        !t.accessing(|x| x.loc.starts_with("Object[") && x.loc.ends_with(".done"))
            .is_empty(),
        "property accesses from the JS pass are in the trace"
    );
    Ok(())
});

case!(user_input_races_with_script_value_write, |h| async move {
    let r = async {
        let page = h.open("/fields/").await?;
        page.focus("#name").await?;
        page.type_text("ab").await?;
        page.click("#agree").await?;
        page.focus("#size").await?;
        page.press_key("ArrowDown").await?;
        h.wait_for(&page, "window.inited === true", Duration::from_secs(2))
            .await?;
        let t = h.flushed_trace(&page).await?;
        let _ = page.close().await;
        anyhow::Ok(t)
    }
    .await;
    let t = r?;
    // The script's `field.value = 'WELCOME'` (logged by the JS pass) and the user's typing
    // (logged by the input dispatch) write the same location, in unordered actions.
    let script_w = t.accessing(|x| x.write && x.value.as_deref() == Some("\"WELCOME\""));
    ensure!(script_w.len() == 1, "the script's write\n{}", t.dump());
    let (timer, loc) = (script_w[0].0, script_w[0].1.loc.clone());
    ensure!(
        loc.starts_with("DOMNode[") && loc.ends_with("].value"),
        "location {loc}"
    );
    let typed: Vec<_> = t
        .with_scope("fire:input @ INPUT[")
        .into_iter()
        .filter_map(|a| t.written(a, &loc).map(|v| (a, v)))
        .collect();
    ensure!(
        typed.iter().any(|(_, v)| v.as_deref() == Some("\"ab\"")),
        "the input action writes {loc} with the typed text: {typed:?}\n{}",
        t.dump()
    );
    for (a, _) in &typed {
        ensure!(t.type_code(*a) == 2, "a user action");
        ensure!(
            !t.hb(*a, timer) && !t.hb(timer, *a),
            "typing and the late write are unordered\n{}",
            t.dump()
        );
    }
    // Checkboxes write `checked`, selects `selectedIndex` and `value`.
    let checked = t.accessing(|x| x.write && x.loc.ends_with("].checked"));
    ensure!(
        checked
            .iter()
            .any(|(a, x)| x.value.as_deref() == Some("true")
                && t.scope(*a)
                    .is_some_and(|s| s.starts_with("fire:change @ INPUT["))),
        "checkbox change writes checked\n{}",
        t.dump()
    );
    let index = t.accessing(|x| x.write && x.loc.ends_with("].selectedIndex"));
    ensure!(
        index.iter().any(|(a, x)| x.value.as_deref() == Some("1")
            && t.scope(*a)
                .is_some_and(|s| s.starts_with("fire:change @ SELECT["))
            && t.written(*a, &x.loc.replace("selectedIndex", "value"))
                == Some(Some("\"m\"".to_string()))),
        "select change writes selectedIndex and value\n{}",
        t.dump()
    );
    Ok(())
});

case!(module_and_quiet_scripts_have_actions, |h| async move {
    let r = async {
        let page = h.open("/modules/").await?;
        h.wait_for(&page, "window.dynRan === 2", Duration::from_secs(4))
            .await?;
        let order = page.evaluate("order.join(',')").await?;
        let t = h.flushed_trace(&page).await?;
        let _ = page.close().await;
        anyhow::Ok((order, t))
    }
    .await;
    let (order, t) = r?;
    ensure!(
        order == json!("main:1,inline-module:1,dcl,late:1"),
        "page behaviour: {order}"
    );
    let dcl = t.one_with_scope("fire:DOMContentLoaded @ Document[1]")?;
    let load = t.one_with_scope("fire:load @ Window[0]")?;
    // A classic script that calls nothing and shares nothing still has its action: its
    // registration (`__shepherd.src`) begins it. External scripts carry their position.
    let quiet = t.one_with_scope("script:async http://")?;
    ensure!(
        t.scope(quiet)
            .is_some_and(|s| s.ends_with("/modules/quiet.js")),
        "quiet script action\n{}",
        t.dump()
    );
    ensure!(
        t.scope_pos(quiet)
            .is_some_and(|p| p.ends_with("/modules/quiet.js:1:1")),
        "script position {:?}",
        t.scope_pos(quiet)
    );
    ensure!(t.hb(quiet, load), "window load waits for async scripts");
    // Each script element's load event comes after the script's execution.
    let script_loads = t.with_scope("fire:load @ SCRIPT[");
    ensure!(
        script_loads.len() == 4,
        "quiet.js, main.js, late.js, ins.js loads\n{}",
        t.dump()
    );
    for l in script_loads {
        ensure!(
            t.of_kind("script").iter().any(|&s| t.has_arc(s, l, 'j')),
            "load {l} joins its script's execution\n{}",
            t.dump()
        );
    }
    // Module scripts are script actions, not host tasks.
    ensure!(
        t.of_kind("task").is_empty(),
        "no task actions\n{}",
        t.dump()
    );
    let modules = t.with_scope("script:module http://");
    let module = |suffix: &str| {
        let found: Vec<_> = modules
            .iter()
            .copied()
            .filter(|&a| t.scope(a).is_some_and(|s| s.ends_with(suffix)))
            .collect();
        match found[..] {
            [a] => Ok(a),
            _ => Err(anyhow::anyhow!(
                "one module action named {suffix}: {found:?}\n{}",
                t.dump()
            )),
        }
    };
    ensure!(
        modules.len() == 4,
        "main.js, ins.js, late.js, dyn.js (dep.js runs inside main.js's action)\n{}",
        t.dump()
    );
    let main = module("/modules/main.js")?;
    ensure!(
        t.reads(main, "Global.order"),
        "main.js reads order in its action\n{}",
        t.dump()
    );
    ensure!(
        t.scope_pos(main)
            .is_some_and(|p| p.ends_with("/modules/main.js:1:1")),
        "module position"
    );
    let (fork, _) = t
        .forked_by(main)
        .ok_or_else(|| anyhow::anyhow!("main.js not forked\n{}", t.dump()))?;
    ensure!(t.kind(fork) == "parse", "forked by its parse chunk");
    let inline = t.one_with_scope("script:module #")?;
    ensure!(
        t.has_arc(main, inline, 'j') && t.has_arc(inline, dcl, 'j'),
        "deferred modules chained in document order, DOMContentLoaded after them\n{}",
        t.dump()
    );
    let late = module("/modules/late.js?delay=300")?;
    ensure!(
        t.has_arc(late, load, 'j') && late > dcl && !t.hb(dcl, late) && t.forked_by(late).is_some(),
        "async module: forked by its chunk, joined by window load, not by DOMContentLoaded\n{}",
        t.dump()
    );
    // A module script inserted by a script: forked by the inserter, window load waits for it.
    let ins = module("/modules/ins.js")?;
    let inserter = t.one_with_scope("script:inline #1")?;
    ensure!(
        t.forked_by(ins).map(|f| f.0) == Some(inserter) && t.has_arc(ins, load, 'j'),
        "inserted module forked by its inserter\n{}",
        t.dump()
    );
    ensure!(
        t.written(ins, "Global.insRan").is_some(),
        "ins.js writes in its action"
    );
    // Inline scripts get their position once their code registers (doc URL#inline-<key>).
    let inline_pos = t.scope_pos(inserter).unwrap_or_default();
    ensure!(
        inline_pos.contains("/modules/#inline-") && inline_pos.ends_with(":1:1"),
        "inline script position: {inline_pos:?}\n{}",
        t.dump()
    );
    // Dynamic import(): a module action of its own (no element), not a host task.
    let dyn_ = module("/modules/dyn.js?delay=1200")?;
    ensure!(
        t.written(dyn_, "Global.dynRan") == Some(Some("2".to_string())),
        "dyn.js writes in its action\n{}",
        t.dump()
    );
    Ok(())
});
