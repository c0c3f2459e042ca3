//! The streamed reports' batches, rendered on two threads and written in order.
//!
//! Rendering a race (building its view, looking up its source lines, formatting it) is most
//! of a report's time, and races of different locations render independently. So the races
//! shown are cut into batches of whole locations; a scoped worker thread and the caller's
//! thread each take the next batch not yet taken, and the caller writes the rendered batches
//! out in order. At most [`Batching::waiting`] rendered batches wait on each side, so the
//! report is never held whole.

use super::SourceMemo;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, TryRecvError};

/// How the streamed reports cut and share their work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Batching {
    /// Races per batch: a batch takes whole locations until it has at least this many.
    pub races: usize,
    /// Fewest races shown worth a second thread (below, the caller renders alone: starting a
    /// thread costs more than it saves on a few locations).
    pub parallel_from: usize,
    /// Rendered batches that may wait to be written, on each side (the worker's channel, the
    /// caller's own batches that are ahead of the next one to write).
    pub waiting: usize,
    /// Render on one thread when the machine has one core (tests turn this off to run both
    /// threads anywhere).
    pub check_cores: bool,
    /// Bytes of rendered batches that may wait while the sink is closed ([`Sink::open`]):
    /// the renderers go on while the repair policies are worked out, up to this much.
    pub ahead: usize,
}

impl Batching {
    /// What the reports use, measured on the bench's synthetic pages (29 000 and 40 000
    /// races): batches of 16 to 256 races render as fast, 1 024 are slower; with one batch
    /// waiting the caller stalls whenever the worker is descheduled on a busy machine, 4 to
    /// 16 measured alike (8 JSON batches are about 2.5 MB). About 600 races is where a second
    /// thread starts to gain (a race renders in 1 to 2 µs; the thread costs about 0.2 ms).
    pub(crate) const DEFAULT: Batching = Batching {
        races: 256,
        parallel_from: 1024,
        waiting: 8,
        check_cores: true,
        // The wide bench page's whole text report is 6.5 MB: 4 MB renders most of it while
        // the repair policies are worked out, for ≈ 2 MB more at the peak than 1 MB.
        ahead: 4 << 20,
    };

    /// Everything on the caller's thread.
    #[cfg(test)]
    pub(crate) const SEQUENTIAL: Batching = Batching {
        parallel_from: usize::MAX,
        ..Batching::DEFAULT
    };

    /// Whether `shown` races in `batches` batches are rendered on two threads (the cores are
    /// counted last: it reads the process's CPU limits, which small reports need not).
    fn parallel(&self, shown: usize, batches: usize) -> bool {
        shown >= self.parallel_from
            && batches > 1
            && (!self.check_cores
                || std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
    }
}

/// A rendered batch: text or JSON bytes.
pub(crate) trait Batch: AsRef<[u8]> + Default + Send {
    /// Empties it, keeping its capacity.
    fn clear(&mut self);
}

impl Batch for String {
    fn clear(&mut self) {
        String::clear(self);
    }
}

impl Batch for Vec<u8> {
    fn clear(&mut self) {
        Vec::clear(self);
    }
}

/// Where the rendered batches go, in order.
pub(crate) trait Sink<B> {
    /// Whether batches may be written now. While not, the renderers go on rendering ahead,
    /// up to [`Batching::ahead`] bytes.
    fn open(&mut self) -> bool {
        true
    }

    /// Waits until batches may be written.
    fn wait_open(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Writes one batch.
    fn write(&mut self, b: &B) -> io::Result<()>;
}

/// A sink that is always open: the batches' bytes as they are.
pub(crate) struct Plain<'o>(pub &'o mut dyn Write);

impl<B: Batch> Sink<B> for Plain<'_> {
    fn write(&mut self, b: &B) -> io::Result<()> {
        self.0.write_all(b.as_ref())
    }
}

/// Emptied batches for the renderers to fill again: a batch is tens to hundreds of kilobytes,
/// and allocating each afresh (growing it by doubling) cost more than rendering it on the
/// second thread saved.
struct Pool<B>(Mutex<Vec<B>>);

impl<B: Batch> Pool<B> {
    fn take(&self) -> B {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default()
    }

    fn put(&self, mut b: B) {
        b.clear();
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(b);
    }
}

/// Writes batches `0..batches` to `out` in order, each as `render` renders it into an empty
/// buffer (with a source memo of the thread it runs on): on the caller's thread alone, or on
/// it and one worker when `batching` says `shown` races are worth it.
pub(crate) fn write_in_order<B, F>(
    out: &mut dyn Sink<B>,
    shown: usize,
    batches: usize,
    batching: Batching,
    render: F,
) -> io::Result<()>
where
    B: Batch,
    F: Fn(&mut SourceMemo, usize, &mut B) -> io::Result<()> + Sync,
{
    if !batching.parallel(shown, batches) {
        let mut memo = SourceMemo::default();
        // Rendered while the sink is closed, in order.
        let mut held: std::collections::VecDeque<B> = std::collections::VecDeque::new();
        let mut held_bytes = 0;
        for k in 0..batches {
            let mut buf = B::default();
            render(&mut memo, k, &mut buf)?;
            held_bytes += buf.as_ref().len();
            held.push_back(buf);
            if !out.open() && held_bytes < batching.ahead {
                continue;
            }
            out.wait_open()?;
            for b in held.drain(..) {
                out.write(&b)?;
            }
            held_bytes = 0;
        }
        out.wait_open()?;
        for b in held.drain(..) {
            out.write(&b)?;
        }
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let pool = Pool(Mutex::new(Vec::new()));
    let waiting = batching.waiting.max(1);
    let (tx, rx) = mpsc::sync_channel::<(usize, io::Result<B>)>(waiting);
    // While the sink is closed only the caller renders: what the sink waits for (the repair
    // policies) is being worked out on the other core, and is the longer of the two.
    let opened = AtomicBool::new(out.open());
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let mut memo = SourceMemo::default();
            while !opened.load(Ordering::Acquire) {
                std::thread::park_timeout(std::time::Duration::from_millis(5));
            }
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= batches {
                    break;
                }
                let mut buf = pool.take();
                let done = render(&mut memo, k, &mut buf).map(|()| buf);
                // A closed channel: the caller stopped (its write failed).
                if tx.send((k, done)).is_err() {
                    break;
                }
            }
        });
        let written = Caller {
            out,
            batches,
            waiting,
            ahead: batching.ahead,
            next: &next,
            pool: &pool,
            rx,
            opened: &opened,
            worker: worker.thread().clone(),
        }
        .run(&render);
        // A caller that stopped early (its write failed) lets the worker go to its end.
        opened.store(true, Ordering::Release);
        worker.thread().unpark();
        match worker.join() {
            Ok(()) => written,
            // The worker's panic is a bug: raise it where the report was asked for.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The caller's side of a parallel report.
struct Caller<'a, 'o, B> {
    out: &'o mut dyn Sink<B>,
    batches: usize,
    waiting: usize,
    /// [`Batching::ahead`].
    ahead: usize,
    next: &'a AtomicUsize,
    pool: &'a Pool<B>,
    /// Dropped when [`Caller::run`] returns, which stops the worker at its next batch.
    rx: mpsc::Receiver<(usize, io::Result<B>)>,
    /// Set once the sink has opened: the worker waits for it.
    opened: &'a AtomicBool,
    worker: std::thread::Thread,
}

impl<B: Batch> Caller<'_, '_, B> {
    /// Writes every batch in order: the next one as soon as it is rendered, else takes the
    /// worker's finished batches, else renders the next batch not taken, else waits.
    fn run<F>(self, render: &F) -> io::Result<()>
    where
        F: Fn(&mut SourceMemo, usize, &mut B) -> io::Result<()>,
    {
        let mut memo = SourceMemo::default();
        // Rendered batches not yet written, by index: the caller's own, and the worker's
        // that came in while an earlier one was still being rendered.
        let mut ready: BTreeMap<usize, io::Result<B>> = BTreeMap::new();
        let mut written = 0;
        // Bytes in `ready`.
        let mut held = 0;
        while written < self.batches {
            let open = self.out.open();
            if open && !self.opened.load(Ordering::Relaxed) {
                self.opened.store(true, Ordering::Release);
                self.worker.unpark();
            }
            if open && let Some(b) = ready.remove(&written) {
                let b = b?;
                held -= b.as_ref().len();
                self.out.write(&b)?;
                self.pool.put(b);
                written += 1;
                continue;
            }
            match self.rx.try_recv() {
                Ok((k, b)) => {
                    held += b.as_ref().map_or(0, |b| b.as_ref().len());
                    ready.insert(k, b);
                    continue;
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => {}
            }
            let room = if open {
                ready.len() < self.waiting
            } else {
                held < self.ahead
            };
            if room {
                let k = self.next.fetch_add(1, Ordering::Relaxed);
                if k < self.batches {
                    let mut buf = self.pool.take();
                    let done = render(&mut memo, k, &mut buf).map(|()| buf);
                    held += done.as_ref().map_or(0, |b| b.as_ref().len());
                    ready.insert(k, done);
                    continue;
                }
            }
            if !open {
                // Nothing more to render here: wait for the sink (the worker stops when its
                // channel is full).
                self.out.wait_open()?;
                continue;
            }
            // The next batch to write is the worker's, still being rendered.
            match self.rx.recv() {
                Ok((k, b)) => {
                    held += b.as_ref().map_or(0, |b| b.as_ref().len());
                    ready.insert(k, b);
                }
                Err(_) => return Err(io::Error::other("the report's worker thread stopped")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{
        Explored, NoSources, RaceReport, RaceView, ReportPlan, SourceProvider, json, text,
    };
    use crate::synth::{SynthConfig, generate};
    use crate::{Analysis, Options, analyze};
    use shepherd_trace::Trace;
    use std::collections::HashMap;

    fn verdict(r: &RaceView) -> Option<Explored> {
        r.id.is_multiple_of(3).then(|| Explored {
            verdict: "harmful".to_owned(),
            reason: format!("reason of race {}", r.id),
            sequence: Some(r.id as u64),
        })
    }

    fn policies(k: usize) -> Vec<String> {
        (0..k % 3).map(|p| format!("policy-{p}")).collect()
    }

    /// A wide synthetic page of 6 000 actions (about 1 600 races shown), planned with
    /// repairing policies and explorer verdicts.
    fn page() -> (Trace, Analysis) {
        let trace = generate(&SynthConfig {
            actions: 6_000,
            ..SynthConfig::wide()
        });
        let an = analyze(&trace, &Options::default()).unwrap();
        (trace, an)
    }

    fn plan(trace: &Trace, an: &Analysis) -> ReportPlan {
        let mut plan = ReportPlan::new(trace, an, false);
        let by = (0..plan.shown.len()).map(policies).collect();
        plan.set_repaired_by(by, vec!["async-user".to_owned()]);
        plan.attach_explored(trace, an, verdict);
        plan
    }

    /// The whole report, rendered at once: what every streamed report must equal.
    fn whole(trace: &Trace, an: &Analysis, sources: &dyn SourceProvider) -> (String, String) {
        let mut r = RaceReport::new(trace, an, false);
        for (k, race) in r.races.iter_mut().enumerate() {
            race.repaired_by = policies(k);
        }
        r.summary.policies_undecided = vec!["async-user".to_owned()];
        r.attach_explored(verdict);
        r.attach_sources(sources);
        (text::render(&r), json::render(&r))
    }

    /// Source text for the synthetic page's script positions (`https://synthetic.test/:N:1`).
    fn sources() -> HashMap<String, String> {
        let page = (1..=10_000).map(|n| format!("  line {n};\n")).collect();
        HashMap::from([("https://synthetic.test/".to_owned(), page)])
    }

    fn streamed(
        trace: &Trace,
        an: &Analysis,
        plan: &ReportPlan,
        sources: &(dyn SourceProvider + Sync),
        batching: Batching,
    ) -> (String, String) {
        let mut t = Vec::new();
        text::write_batched(&mut t, trace, an, plan, sources, batching).unwrap();
        let mut j = Vec::new();
        json::write_batched(&mut j, trace, an, plan, sources, batching).unwrap();
        (String::from_utf8(t).unwrap(), String::from_utf8(j).unwrap())
    }

    /// Two threads, one-race batches and one batch waiting on each side: the batches come
    /// out of the threads in every order.
    const INTERLEAVED: Batching = Batching {
        races: 1,
        parallel_from: 0,
        waiting: 1,
        check_cores: false,
        ahead: 1 << 20,
    };

    /// Marks that come after `polls` questions (or when taken).
    struct Late {
        polls: std::cell::Cell<usize>,
        marks: Option<(Vec<Vec<String>>, Vec<String>)>,
    }

    impl text::PendingMarks for Late {
        fn is_ready(&self) -> bool {
            let left = self.polls.get();
            self.polls.set(left.saturating_sub(1));
            left == 0
        }

        fn take(&mut self) -> (Vec<Vec<String>>, Vec<String>) {
            self.polls.set(0);
            self.marks.take().unwrap_or_default()
        }
    }

    /// The text report with the plan's marks given late, after `polls` questions.
    fn late_text(
        trace: &Trace,
        an: &Analysis,
        plan: &ReportPlan,
        sources: &(dyn SourceProvider + Sync),
        batching: Batching,
        polls: usize,
    ) -> String {
        let by = (0..plan.shown.len()).map(policies).collect();
        let mut marks = Late {
            polls: std::cell::Cell::new(polls),
            marks: Some((by, vec!["async-user".to_owned()])),
        };
        let mut unmarked = ReportPlan::new(trace, an, false);
        unmarked.attach_explored(trace, an, verdict);
        let mut t = Vec::new();
        text::write_marks_later_batched(
            &mut t, trace, an, &unmarked, sources, &mut marks, batching,
        )
        .unwrap();
        String::from_utf8(t).unwrap()
    }

    /// Rendered before its marks are known, then spliced: the same text as with the marks
    /// known, whether they come at once, partway or after everything is rendered, and whether
    /// the look-ahead holds the whole report or a few batches.
    #[test]
    fn late_marks_give_the_same_text() {
        let (trace, an) = page();
        let plan = plan(&trace, &an);
        let sources = sources();
        let want = streamed(&trace, &an, &plan, &sources, Batching::SEQUENTIAL).0;
        let two = Batching {
            check_cores: false,
            ..Batching::DEFAULT
        };
        let small = Batching {
            ahead: 4096,
            ..INTERLEAVED
        };
        let one_small = Batching {
            ahead: 4096,
            ..Batching::SEQUENTIAL
        };
        for batching in [Batching::SEQUENTIAL, one_small, two, INTERLEAVED, small] {
            for polls in [0, 3, 40, usize::MAX] {
                let got = late_text(&trace, &an, &plan, &sources, batching, polls);
                assert!(
                    got == want,
                    "text differs with {batching:?}, marks after {polls} polls"
                );
            }
        }
        assert!(want.contains("repair policies not worked out"));
        assert!(want.contains("ordered by policy: policy-0, policy-1\n"));
    }

    #[test]
    fn parallel_reports_equal_sequential_ones() {
        let (trace, an) = page();
        let plan = plan(&trace, &an);
        let sources = sources();
        let shown = plan.shown.len();
        let batches = plan.batches(&an, Batching::DEFAULT.races).len();
        // Large enough for the reports' own batching to take two threads.
        assert!(
            shown >= Batching::DEFAULT.parallel_from && batches > 1,
            "{shown} races, {batches} batches"
        );
        let two = Batching {
            check_cores: false,
            ..Batching::DEFAULT
        };
        for src in [&NoSources as &(dyn SourceProvider + Sync), &sources] {
            let want = whole(&trace, &an, src);
            let one = streamed(&trace, &an, &plan, src, Batching::SEQUENTIAL);
            assert!(
                one == want,
                "the sequential report differs from the whole one"
            );
            for batching in [two, INTERLEAVED] {
                let got = streamed(&trace, &an, &plan, src, batching);
                assert!(got.0 == one.0, "text differs with {batching:?}");
                assert!(got.1 == one.1, "JSON differs with {batching:?}");
            }
        }
        // The sources were used: the script lines show under the races that have them.
        let with = streamed(&trace, &an, &plan, &sources, INTERLEAVED);
        assert!(with.0.contains(" |   line "), "no source line in the text");
        assert!(
            with.1.contains("\"text\": \"  line "),
            "no source line in the JSON"
        );
        assert!(with.0.contains("ordered by policy: policy-0, policy-1\n"));
        assert!(with.0.contains("    explored: harmful (reason of race "));
    }

    /// A report whose writer fails partway stops both threads and returns the error.
    #[test]
    fn a_failing_writer_stops_the_report() {
        struct Fails(usize);
        impl Write for Fails {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk full"));
                }
                self.0 -= 1;
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let (trace, an) = page();
        let plan = plan(&trace, &an);
        for after in [0, 1, 5, 50] {
            let e = text::write_batched(
                &mut Fails(after),
                &trace,
                &an,
                &plan,
                &NoSources,
                INTERLEAVED,
            )
            .unwrap_err();
            assert_eq!(e.to_string(), "disk full");
        }
    }
}
