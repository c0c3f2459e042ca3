//! Event sources the papers never covered, end to end (record mode, the full pipeline: HTML
//! rewriter, JS pass, runtime): host-resolved promises, animation frames, MessageChannel,
//! dynamic `import()`, dedicated workers, observers, Web Storage and a service worker. Each
//! case checks the actions and arcs in the trace and, where it is about races, what the
//! analysis reports on the page's racing (and non-racing) locations.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, ensure};
use shepherd_e2e::{Case, TraceQuery, case, run_cases};
use shepherd_runtime::Mode;
use shepherd_trace::ActionId;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        (
            "host_promises_fork_their_continuations",
            host_promises_fork_their_continuations,
        ),
        ("animation_frames_are_fifo", animation_frames_are_fifo),
        (
            "message_channel_queues_are_fifo",
            message_channel_queues_are_fifo,
        ),
        (
            "dynamic_import_forked_by_its_caller",
            dynamic_import_forked_by_its_caller,
        ),
        (
            "workers_are_traced_into_the_page",
            workers_are_traced_into_the_page,
        ),
        (
            "observers_are_ordered_after_observe",
            observers_are_ordered_after_observe,
        ),
        (
            "mutation_observer_after_the_parser",
            mutation_observer_after_the_parser,
        ),
        (
            "storage_keys_and_storage_events",
            storage_keys_and_storage_events,
        ),
        (
            "service_worker_answers_a_fetch",
            service_worker_answers_a_fetch,
        ),
    ];
    run_cases(Mode::Record, cases)
}

/// The one action that writes `loc`.
fn writer(t: &TraceQuery, loc: &str) -> anyhow::Result<ActionId> {
    let w: Vec<ActionId> = t
        .accessing(|x| x.write && x.loc == loc)
        .into_iter()
        .map(|(a, _)| a)
        .collect();
    match w[..] {
        [a] => Ok(a),
        _ => Err(anyhow!("writers of {loc}: {w:?}\n{}", t.dump())),
    }
}

/// No action of the trace logged an exception.
fn no_exceptions(t: &TraceQuery) -> anyhow::Result<()> {
    for a in &t.trace.actions {
        let ex = t.exceptions(a.id);
        ensure!(
            ex.is_empty(),
            "exceptions in #{}: {ex:?}\n{}",
            a.id,
            t.dump()
        );
    }
    Ok(())
}

case!(host_promises_fork_their_continuations, |h| async move {
    let t = h.record_until("/sources/promises/", "window.data !== undefined && typeof window.permission === 'string' && window.decodedMicro === true && window.fontsReady === true", Duration::from_secs(5))
    .await?;
    // Nothing runs as an anonymous host task: every continuation has its creator.
    ensure!(t.of_kind("task").is_empty(), "task actions\n{}", t.dump());
    let script = t.one_with_scope("script:inline #1")?;
    let decoded = writer(&t, "Global.decoded")?;
    ensure!(
        t.kind(decoded) == "continuation" && t.forked_by(decoded).map(|f| f.0) == Some(script),
        "img.decode()'s reaction is a continuation forked by the script that called then\n{}",
        t.dump()
    );
    ensure!(
        writer(&t, "Global.decodedMicro")? == decoded,
        "queueMicrotask belongs to the turn that queued it"
    );
    let fonts = writer(&t, "Global.fontsReady")?;
    ensure!(t.hb(script, fonts), "document.fonts.ready after the script");
    let data = writer(&t, "Global.data")?;
    ensure!(
        t.hb(script, data) && matches!(t.kind(data), "fetch" | "body"),
        "fetch + await + json(): the body read's action, after the caller\n{}",
        t.dump()
    );
    let timer = t.of_kind("timer");
    let permission = writer(&t, "Global.permission")?;
    ensure!(
        timer.len() == 1
            && t.kind(permission) == "continuation"
            && t.forked_by(permission).map(|f| f.0) == Some(timer[0]),
        "navigator.permissions.query's reaction forked by the timer\n{}",
        t.dump()
    );
    Ok(())
});

case!(animation_frames_are_fifo, |h| async move {
    // Three frames and both timers, in whichever order a loaded machine runs them (the frame
    // and the 30 ms timer race: either may write `shared` last).
    let t = h
        .record_trace_until("/sources/frames/", Duration::from_secs(3), |t| {
            t.of_kind("raf").len() >= 3 && t.of_kind("timer").len() >= 2
        })
        .await?;
    let frames = t.of_kind("raf");
    ensure!(frames.len() == 3, "three frames\n{}", t.dump());
    for &f in &frames {
        ensure!(
            t.reads(f, "Queue:AnimationFrames"),
            "frame queue\n{}",
            t.dump()
        );
    }
    ensure!(
        t.uncovered_on("Global.order")?.is_empty(),
        "frames registered by ordered actions run in order:\n{}",
        t.races_text(|l| l.starts_with("Global."))
    );
    ensure!(
        !t.uncovered_on("Global.shared")?.is_empty(),
        "a frame and an unrelated timer race:\n{}",
        t.races_text(|l| l.starts_with("Global."))
    );
    Ok(())
});

case!(message_channel_queues_are_fifo, |h| async move {
    // Every message delivered: both racing ones too, not only the first to write `mixed`.
    let t = h
        .record_trace_until("/sources/channels/", Duration::from_secs(3), |t| {
            t.of_kind("message").len() >= 7
        })
        .await?;
    let messages = t.of_kind("message");
    ensure!(messages.len() == 7, "seven port messages\n{}", t.dump());
    for &m in &messages {
        ensure!(
            t.accesses(m)
                .iter()
                .any(|x| !x.write && x.loc.starts_with("Queue:MessagePort[")),
            "each message reads its port's queue\n{}",
            t.dump()
        );
    }
    let text = || t.races_text(|l| l.starts_with("Global."));
    ensure!(
        t.uncovered_on("Global.lastStep")?.is_empty(),
        "the scheduler's messages post each other:\n{}",
        text()
    );
    ensure!(
        t.uncovered_on("Global.fifo")?.is_empty(),
        "one queue, posts by ordered actions (script, then its timer):\n{}",
        text()
    );
    ensure!(
        !t.uncovered_on("Global.mixed")?.is_empty(),
        "two queues race:\n{}",
        text()
    );
    Ok(())
});

case!(dynamic_import_forked_by_its_caller, |h| async move {
    let t = h.record_until("/sources/dynimport/", "window.plainRan === true && window.withDepRan === true && window.noImportsRan === true", Duration::from_secs(3))
    .await?;
    ensure!(t.of_kind("task").is_empty(), "task actions\n{}", t.dump());
    let timers = t.of_kind("timer");
    ensure!(timers.len() == 2, "two timers\n{}", t.dump());
    let plain = writer(&t, "Global.plainRan")?;
    ensure!(
        t.kind(plain) == "script" && t.forked_by(plain).map(|f| f.0) == Some(timers[0]),
        "import('./plain.js') is forked by the timer that called it\n{}",
        t.dump()
    );
    // A graph that starts with a dependency: one action, forked by the caller once the
    // imported module registers.
    let with_dep = writer(&t, "Global.withDepRan")?;
    ensure!(
        writer(&t, "Global.depRan")? == with_dep
            && t.forked_by(with_dep).map(|f| f.0) == Some(timers[1]),
        "import('./withdep.js') (and its dependency) forked by the second timer\n{}",
        t.dump()
    );
    // A module script without import/export (instrumented as a classic script) is still its
    // element's execution: a module action forked by its parse chunk, not a host task.
    let plain_module = writer(&t, "Global.noImportsRan")?;
    let url = h.origin.url("/sources/dynimport/noimports.js");
    ensure!(
        t.scope(plain_module) == Some(format!("script:module {url}").as_str())
            && t.forked_by(plain_module)
                .is_some_and(|f| t.kind(f.0) == "parse"),
        "noimports.js: a module action forked by its chunk\n{}",
        t.dump()
    );
    Ok(())
});

case!(workers_are_traced_into_the_page, |h| async move {
    // The three answers and the page's timer, in whichever order they come: the timer races
    // with the answers on `result`, so the page's own state cannot say that all arrived.
    let page = h.open("/sources/workers/").await?;
    let t = h
        .trace_until(&page, Duration::from_secs(5), |t| {
            t.with_scope("fire:message @ Worker[").len() >= 3 && !t.of_kind("timer").is_empty()
        })
        .await;
    let _ = page.close().await;
    let t = t?;
    no_exceptions(&t)?;
    let script = t.one_with_scope("script:inline #1")?;
    let worker_url = h.origin.url("/sources/workers/worker.js");
    let classic = t.one_with_scope(&format!("script:worker {worker_url}"))?;
    let module = t.one_with_scope(&format!(
        "script:worker {}",
        h.origin.url("/sources/workers/mworker.js")
    ))?;
    for w in [classic, module] {
        ensure!(
            t.forked_by(w).map(|f| f.0) == Some(script),
            "worker script #{w} forked by the action that created the Worker\n{}",
            t.dump()
        );
    }
    // The worker's own code is instrumented, under the worker's prefix, with its positions
    // (importScripts'd code too).
    let count = t
        .accessing(|x| x.write && x.loc.starts_with("Worker[") && x.loc.ends_with("/Global.count"))
        .first()
        .map(|(_, x)| x.loc.clone())
        .context("the worker's `count`")?;
    let prefix = count.trim_end_matches("Global.count").to_string();
    ensure!(
        t.accesses(classic).iter().any(|x| x.write
            && x.loc == format!("{prefix}Global.count")
            && x.pos
                .as_deref()
                .is_some_and(|p| p.starts_with(&format!("{worker_url}:2:")))),
        "the worker script's write of count, at worker.js line 2\n{}",
        t.dump()
    );
    let lib = h.origin.url("/sources/workers/wlib.js");
    ensure!(
        t.accesses(classic).iter().any(|x| x.write
            && x.loc == format!("{prefix}Global.label")
            && x.pos
                .as_deref()
                .is_some_and(|p| p.starts_with(&format!("{lib}:1:")))),
        "importScripts('wlib.js') runs instrumented inside the worker\n{}",
        t.dump()
    );
    // Messages to the worker: forked by the page's post, after the worker's script, FIFO.
    let inbox: Vec<ActionId> = t
        .of_kind("message")
        .into_iter()
        .filter(|&a| t.reads(a, &format!("Queue:{prefix}parent")))
        .collect();
    ensure!(inbox.len() == 2, "two messages in the worker\n{}", t.dump());
    for &m in &inbox {
        ensure!(
            t.forked_by(m).map(|f| f.0) == Some(script) && t.hb(classic, m),
            "forked by the posting script, after the worker's script\n{}",
            t.dump()
        );
    }
    ensure!(t.hb(inbox[0], inbox[1]), "one poster: FIFO");
    // Messages from the worker: forked by the worker action that posted them.
    let answers = t.with_scope("fire:message @ Worker[");
    ensure!(
        answers.len() == 3,
        "three answers (two + module)\n{}",
        t.dump()
    );
    for &a in &answers {
        let (from, _) = t.forked_by(a).context("an answer without its poster")?;
        ensure!(
            t.hb(script, from) && from != script,
            "answer #{a} forked by a worker action\n{}",
            t.dump()
        );
    }
    ensure!(
        answers
            .iter()
            .any(|&a| t.forked_by(a).is_some_and(|f| t.hb(module, f.0))),
        "the module worker's answer comes from its script\n{}",
        t.dump()
    );
    let text = || t.races_text(|l| l.starts_with("Global.") || l.starts_with("Worker["));
    ensure!(
        t.uncovered_on("Global.config")?.is_empty(),
        "the script's write is ordered before the answers through the worker:\n{}",
        text()
    );
    ensure!(
        t.uncovered_on(&format!("{prefix}Global.count"))?.is_empty(),
        "the worker's messages are FIFO:\n{}",
        text()
    );
    let result = t.uncovered_on("Global.result")?;
    ensure!(
        !result.is_empty()
            && result.iter().all(|r| {
                [r.first.action, r.second.action]
                    .iter()
                    .any(|&a| t.kind(a) == "timer")
            }),
        "the answers race with the page's timer, not with each other:\n{}",
        text()
    );
    Ok(())
});

case!(observers_are_ordered_after_observe, |h| async move {
    let t = h
        .record_until(
            "/sources/observers/",
            "window.ioSaw === 'ready' && window.roSaw === 'ready'",
            Duration::from_secs(3),
        )
        .await?;
    let timer = writer(&t, "Global.state")?;
    for kind in ["observer:intersection", "observer:resize"] {
        let cb = t.of_kind(kind);
        ensure!(cb.len() == 1, "{kind}\n{}", t.dump());
        ensure!(
            t.has_arc(timer, cb[0], 'j'),
            "{kind}'s first callback joins the action that observed\n{}",
            t.dump()
        );
    }
    ensure!(
        t.uncovered_on("Global.state")?.is_empty(),
        "no race between observing and the first callbacks:\n{}",
        t.races_text(|l| l.starts_with("Global."))
    );
    Ok(())
});

case!(mutation_observer_after_the_parser, |h| async move {
    let t = h
        .record_until(
            "/sources/mutations/",
            "window.after > 0 && window.blocked === true",
            Duration::from_secs(3),
        )
        .await?;
    ensure!(t.of_kind("task").is_empty(), "task actions\n{}", t.dump());
    let creator = t.one_with_scope("script:inline #1")?;
    let cbs = t.of_kind("observer:mutation");
    ensure!(!cbs.is_empty(), "observer callbacks\n{}", t.dump());
    for &cb in &cbs {
        ensure!(
            t.forked_by(cb).map(|f| f.0) == Some(creator)
                && t.trace.arcs.iter().any(|a| a.head == cb
                    && t.kind(a.tail) == "parse"
                    && a.kind == shepherd_trace::ArcKind::Join),
            "callback #{cb}: forked by its creator, after the parse chunk\n{}",
            t.dump()
        );
    }
    ensure!(
        t.uncovered_on("Global.mutations")?.is_empty(),
        "the parser's chain runs through the callbacks:\n{}",
        t.races_text(|l| l.starts_with("Global."))
    );
    Ok(())
});

case!(storage_keys_and_storage_events, |h| async move {
    let t = h
        .record_until(
            "/sources/storage/",
            "window.theme !== undefined && window.changed === 'theme'",
            Duration::from_secs(3),
        )
        .await?;
    let ev = t.one_with_scope("fire:storage @ Window[0]")?;
    let loc = t
        .accesses(ev)
        .into_iter()
        .find(|x| x.write && x.loc.starts_with("Storage[") && x.loc.ends_with(".theme"))
        .context("the storage event writes the key")?;
    ensure!(loc.value.as_deref() == Some("\"dark\""), "{loc:?}");
    let script = t.one_with_scope("script:inline #1")?;
    // clear() then setItem(): the script writes the key (its first write is logged).
    ensure!(
        t.written(script, &loc.loc).is_some(),
        "the script writes the key\n{}",
        t.dump()
    );
    let timer = t
        .of_kind("timer")
        .into_iter()
        .find(|&a| t.reads(a, &loc.loc))
        .context("getItem reads the key")?;
    let races = t.uncovered_on(&loc.loc)?;
    ensure!(
        races.iter().any(|r| {
            let pair = [r.first.action, r.second.action];
            pair.contains(&ev) && pair.contains(&timer)
        }),
        "the other document's write races with the read:\n{}",
        t.races_text(|l| l.starts_with("Storage["))
    );
    Ok(())
});

case!(service_worker_answers_a_fetch, |h| async move {
    let t = h
        .record_until(
            "/sources/serviceworker/",
            "window.answer === 'service worker'",
            Duration::from_secs(8),
        )
        .await?;
    no_exceptions(&t)?;
    ensure!(t.of_kind("task").is_empty(), "task actions\n{}", t.dump());
    let fetch = t
        .of_kind("fetch")
        .into_iter()
        .find(|&a| t.stable(a).contains("virtual.json"))
        .context("the fetch the service worker answers")?;
    // The action that called fetch (it read `fetch`) forks the settlement, whoever answered.
    let caller = t
        .accessing(|x| !x.write && x.loc == "Global.fetch")
        .first()
        .map(|(a, _)| *a)
        .context("the fetch call")?;
    ensure!(
        t.forked_by(fetch).map(|f| f.0) == Some(caller),
        "the answer is a settlement forked by the caller\n{}",
        t.dump()
    );
    let answer = writer(&t, "Global.answer")?;
    ensure!(
        t.hb(fetch, answer),
        "the page uses the answer after it\n{}",
        t.dump()
    );
    Ok(())
});
