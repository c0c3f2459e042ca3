//! Worker threads with large stacks that run instrumentation jobs.
//!
//! swc's parser, visitors and emitter recurse over the AST; deep (but accepted) input needs
//! far more than the default 8 MB, and a stack overflow aborts the whole process. Workers are
//! created once and reused, so their allocator arenas stay warm between jobs.

use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::thread;

use crate::contract::{Error, Options, Output};
use crate::job;

/// Stack size of each worker.
pub(crate) const WORKER_STACK: usize = 256 * 1024 * 1024;

type Reply = mpsc::Sender<Result<Output, Error>>;
type Job = (String, Options, bool, Reply);

static POOL: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();

fn start() -> Option<Mutex<mpsc::Sender<Job>>> {
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    let n = thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    let mut started = 0;
    for i in 0..n {
        let rx = Arc::clone(&rx);
        let spawned = thread::Builder::new()
            .name(format!("shepherd-instrument-js-{i}"))
            .stack_size(WORKER_STACK)
            .spawn(move || worker(&rx));
        if spawned.is_ok() {
            started += 1;
        }
    }
    (started > 0).then(|| Mutex::new(tx))
}

fn worker(rx: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let next = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        let Ok((src, opts, record, reply)) = next else {
            return;
        };
        let result = std::panic::catch_unwind(move || job::run_with(src, &opts, record))
            .unwrap_or_else(|p| Err(panicked(&*p)));
        let _ = reply.send(result);
    }
}

/// A panic outside the parser (the pass, codegen): a bug of ours, reported, never propagated.
fn panicked(p: &(dyn std::any::Any + Send)) -> Error {
    Error::Worker(format!("instrumentation panicked: {}", job::panic_text(p)))
}

/// Runs one job on a pool worker (or, if no worker could be started, on a fresh thread).
pub(crate) fn submit(src: String, opts: Options, record: bool) -> Result<Output, Error> {
    let (reply, result) = mpsc::channel();
    match POOL.get_or_init(start) {
        Some(tx) => {
            let tx = match tx.lock() {
                Ok(g) => g.clone(),
                Err(poisoned) => poisoned.into_inner().clone(),
            };
            tx.send((src, opts, record, reply))
                .map_err(|_| Error::Worker("instrumentation workers are gone".into()))?;
        }
        None => {
            thread::Builder::new()
                .stack_size(WORKER_STACK)
                .spawn(move || {
                    let r = std::panic::catch_unwind(move || job::run_with(src, &opts, record))
                        .unwrap_or_else(|p| Err(panicked(&*p)));
                    let _ = reply.send(r);
                })
                .map_err(|e| Error::Worker(e.to_string()))?;
        }
    }
    result
        .recv()
        .map_err(|_| Error::Worker("instrumentation worker died".into()))?
}
