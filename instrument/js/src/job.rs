//! One instrumentation job: parse → resolve → analyse → rewrite → emit.
//! Runs entirely on the calling (worker) thread inside fresh swc `Globals`.

use std::time::{Duration, Instant};

use swc_core::common::{FileName, GLOBALS, Globals, Mark, SourceMap, Spanned, sync::Lrc};
use swc_core::ecma::ast::{EsVersion, Pass as _, Program};
use swc_core::ecma::codegen::{Config, Emitter, text_writer::JsWriter};
use swc_core::ecma::parser::{EsSyntax, Syntax, parse_file_as_module, parse_file_as_script};
use swc_core::ecma::transforms::base::resolver;
use swc_core::ecma::visit::VisitMutWith;

use crate::contract::{Error, Kind, MARKER, Options, Output};
use crate::{analysis, early, faithful, pass::Pass, positions::Positions, srcmap};

/// The tree, file and source map of a finished job, freed after the reply.
type Garbage = Option<Box<dyn std::any::Any>>;

/// Wall time of each phase of one job on the current thread (benchmark breakdown).
pub(crate) fn profile(src: String, opts: &Options) -> Result<Vec<(&'static str, Duration)>, Error> {
    GLOBALS.set(&Globals::new(), || {
        let mut phases = Vec::new();
        let mut garbage = None;
        run_phases(src, opts, true, &mut phases, &mut garbage)?;
        let t = Instant::now();
        free(garbage);
        phases.push(("drop (after reply)", t.elapsed()));
        Ok(phases)
    })
}

/// `record: false` is the benchmark's baseline: swc's parse and emit only (no early-error
/// walk, resolver, analysis or pass).
pub(crate) fn run_with(src: String, opts: &Options, record: bool) -> Result<Output, Error> {
    let mut out = None;
    run_then(src, opts, record, |r| out = Some(r));
    out.unwrap_or_else(|| Err(Error::Worker("no result".into())))
}

/// Runs a job and hands the result to `done` *before* the syntax tree and source map are
/// freed (freeing a large tree costs about as much as emitting it; the caller need not wait).
pub(crate) fn run_then(
    src: String,
    opts: &Options,
    record: bool,
    done: impl FnOnce(Result<Output, Error>),
) {
    GLOBALS.set(&Globals::new(), || {
        let mut garbage = None;
        let result = run_phases(src, opts, record, &mut Vec::new(), &mut garbage);
        done(result);
        free(garbage);
    })
}

/// Frees a finished job's tree, then the atoms only the thread's interning table still holds.
/// Every name longer than 7 bytes that a job interns (identifiers, and the pass's position
/// literals: one per access, distinct for every script) stays in swc's per-thread table until
/// collected: without this, a worker grew by ~0.3 MB per distinct jQuery-sized script, for
/// the life of the proxy, and the table's lookups slowed with it.
fn free(garbage: Garbage) {
    drop(garbage);
    swc_core::atoms::hstr::global_atom_store_gc();
}

fn run_phases(
    src: String,
    opts: &Options,
    record: bool,
    phases: &mut Vec<(&'static str, Duration)>,
    garbage: &mut Garbage,
) -> Result<Output, Error> {
    let mut t = Instant::now();
    let mut lap = |name: &'static str, phases: &mut Vec<(&'static str, Duration)>| {
        let now = Instant::now();
        phases.push((name, now - t));
        t = now;
    };
    let bom = src.starts_with('\u{feff}');
    let cm: Lrc<SourceMap> = Default::default();
    let fm = cm.new_source_file(FileName::Custom(opts.source_name.clone()).into(), src);
    let syntax = Syntax::Es(EsSyntax {
        allow_return_outside_function: opts.kind == Kind::Handler,
        ..Default::default()
    });
    let mut recovered = Vec::new();
    // swc's lexer has assertions that page input can trip (an HTML-like comment directly
    // followed by a regular expression, `<!--\n/a/`, in swc_ecma_parser 47): a panic while
    // parsing is a parse error like any other (the caller serves the original bytes).
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match opts.kind {
        Kind::Module => {
            parse_file_as_module(&fm, syntax, EsVersion::latest(), None, &mut recovered)
                .map(Program::Module)
        }
        _ => parse_file_as_script(&fm, syntax, EsVersion::latest(), None, &mut recovered)
            .map(Program::Script),
    }));
    let program =
        parsed.map_err(|p| Error::Parse(format!("parser panicked: {}", panic_text(&*p))))?;
    let mut program = program.map_err(|e| Error::Parse(describe(&e)))?;
    // A hashbang is only valid at the very start; the marker line comes first now.
    match &mut program {
        Program::Script(s) => s.shebang = None,
        Program::Module(m) => m.shebang = None,
    }
    // `recovered` holds every error the parser recovered from (`take_errors`). Its other
    // list, `take_script_module_errors`, holds errors that apply only to module or strict
    // code; in a sloppy script they are none, and code that a directive makes strict after
    // the parser passed its name and parameters is checked by `early.rs`.
    if let Some(e) = recovered.first() {
        return Err(Error::Recovered(describe(e)));
    }
    lap("parse", phases);
    // The baseline (`record: false`) is swc's own parse + emit: none of the pass's checks.
    let legacy_literals = if record {
        let findings = early::check(&program, &fm.src, fm.start_pos).map_err(|r| match r {
            early::Refusal::Invalid(m) => Error::Invalid(m),
            early::Refusal::Unfaithful(m) => Error::Unfaithful(m),
        })?;
        lap("early errors", phases);
        findings.legacy_literals
    } else {
        false
    };

    if record {
        let unresolved_mark = Mark::new();
        let top_level_mark = Mark::new();
        resolver(unresolved_mark, top_level_mark, false).process(&mut program);
        lap("resolver", phases);
        let caps = analysis::analyze(
            &program,
            swc_core::common::SyntaxContext::empty().apply_mark(unresolved_mark),
        );
        lap("analysis", phases);
        let positions = Positions::new(fm.clone());
        let mut pass = Pass::new(
            opts.kind,
            unresolved_mark,
            top_level_mark,
            &caps,
            &positions,
            opts.inline_script,
            bom,
        );
        program.visit_mut_with(&mut pass);
        lap("pass", phases);
        // No `fixer`: every rewrite yields a call where an identifier or member stood (same
        // or higher precedence); the one exception, a `new` callee, is parenthesised by the
        // pass. No `hygiene` either: it would rename user bindings (Function#toString, DI).
    }

    if legacy_literals {
        faithful::keep_raw(&mut program, opts.ascii_only, opts.inline_script).map_err(|_| {
            Error::Unfaithful("a legacy octal string that would need escaping".into())
        })?;
    }

    // The marker line goes first into the emitter's own buffer (no copy of the output after).
    let mut buf = Vec::with_capacity(fm.src.len() * 2 + MARKER.len() + 1);
    buf.extend_from_slice(MARKER.as_bytes());
    buf.push(b'\n');
    let mut mappings = Vec::new();
    {
        let wr = JsWriter::new(
            cm.clone(),
            "\n",
            &mut buf,
            opts.source_map.then_some(&mut mappings),
        );
        let mut emitter = Emitter {
            cfg: Config::default()
                .with_minify(true)
                .with_target(EsVersion::latest())
                .with_ascii_only(opts.ascii_only)
                .with_inline_script(opts.inline_script),
            cm: cm.clone(),
            comments: None,
            wr,
        };
        emitter
            .emit_program(&program)
            .map_err(|e| Error::Worker(format!("codegen: {e}")))?;
    }
    lap("codegen", phases);
    let code = String::from_utf8(buf).map_err(|e| Error::Worker(format!("codegen: {e}")))?;
    if opts.ascii_only && !code.is_ascii() {
        return Err(Error::NotAscii);
    }

    let source_map = if opts.source_map {
        // The marker line shifts every generated line by one.
        for (_, lc) in mappings.iter_mut() {
            lc.line += 1;
        }
        let orig = opts.input_source_map.as_deref().and_then(|m| {
            swc_sourcemap::SourceMap::from_slice(m.as_bytes())
                .map_err(|e| tracing::debug!("ignoring unreadable input source map: {e}"))
                .ok()
        });
        let map = srcmap::build(&cm, &fm, &mappings, orig);
        let mut out = Vec::new();
        map.to_writer(&mut out)
            .map_err(|e| Error::SourceMap(e.to_string()))?;
        Some(String::from_utf8(out).map_err(|e| Error::SourceMap(e.to_string()))?)
    } else {
        None
    };
    lap("finish", phases);
    *garbage = Some(Box::new((program, fm, cm)));
    Ok(Output { code, source_map })
}

/// The message of a panic payload (`&str` or `String`, as `panic!` produces).
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

fn describe(e: &swc_core::ecma::parser::error::Error) -> String {
    let span = e.span();
    format!("{} at bytes {}..{}", e.kind().msg(), span.lo.0, span.hi.0)
}
