//! One instrumentation job: parse → resolve → analyse → rewrite → fix parentheses → emit.
//! Runs entirely on the calling (worker) thread inside fresh swc `Globals`.

use swc_core::common::{
    FileName, GLOBALS, Globals, Mark, SourceMap, Spanned, source_map::DefaultSourceMapGenConfig,
    sync::Lrc,
};
use swc_core::ecma::ast::{EsVersion, Pass as _, Program};
use swc_core::ecma::codegen::{Config, Emitter, text_writer::JsWriter};
use swc_core::ecma::parser::{EsSyntax, Syntax, parse_file_as_module, parse_file_as_script};
use swc_core::ecma::transforms::base::{fixer::fixer, resolver};
use swc_core::ecma::visit::VisitMutWith;

use crate::{Error, Kind, MARKER, Options, Output, analysis, pass::Pass};

pub(crate) fn run(src: String, opts: &Options) -> Result<Output, Error> {
    GLOBALS.set(&Globals::new(), || run_in_globals(src, opts))
}

fn run_in_globals(src: String, opts: &Options) -> Result<Output, Error> {
    let tag = short_hash(&src);
    let cm: Lrc<SourceMap> = Default::default();
    let fm = cm.new_source_file(FileName::Custom(opts.source_name.clone()).into(), src);
    let syntax = Syntax::Es(EsSyntax {
        allow_return_outside_function: opts.kind == Kind::Handler,
        ..Default::default()
    });
    let mut recovered = Vec::new();
    let program = match opts.kind {
        Kind::Module => {
            parse_file_as_module(&fm, syntax, EsVersion::latest(), None, &mut recovered)
                .map(Program::Module)
        }
        _ => parse_file_as_script(&fm, syntax, EsVersion::latest(), None, &mut recovered)
            .map(Program::Script),
    };
    let mut program = program.map_err(|e| Error::Parse(describe(&e)))?;
    if let Some(e) = recovered.first() {
        return Err(Error::Recovered(describe(e)));
    }

    let unresolved_mark = Mark::new();
    let top_level_mark = Mark::new();
    resolver(unresolved_mark, top_level_mark, false).process(&mut program);
    let caps = analysis::analyze(&program);
    let mut pass = Pass::new(opts.kind, unresolved_mark, top_level_mark, &caps, tag);
    program.visit_mut_with(&mut pass);
    fixer(None).process(&mut program);

    let mut buf = Vec::with_capacity(fm.src.len() * 2);
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
    let body = String::from_utf8(buf).map_err(|e| Error::Worker(format!("codegen: {e}")))?;
    let code = format!("{MARKER}\n{body}");

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
        let map = cm.build_source_map(&mappings, orig, DefaultSourceMapGenConfig);
        let mut out = Vec::new();
        map.to_writer(&mut out)
            .map_err(|e| Error::SourceMap(e.to_string()))?;
        Some(String::from_utf8(out).map_err(|e| Error::SourceMap(e.to_string()))?)
    } else {
        None
    };
    Ok(Output { code, source_map })
}

fn describe(e: &swc_core::ecma::parser::error::Error) -> String {
    let span = e.span();
    format!("{} at bytes {}..{}", e.kind().msg(), span.lo.0, span.hi.0)
}

/// Eight hex digits of FNV-1a: names this source's top-level temporaries.
fn short_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}
