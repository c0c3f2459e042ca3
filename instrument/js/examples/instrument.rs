//! Prints the instrumented form of a file: `cargo run --example instrument -- FILE [script|module|handler|jsurl]`.
use shepherd_instrument_js::{Kind, Options, instrument};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: instrument FILE [script|module|handler|jsurl]");
        return std::process::ExitCode::FAILURE;
    };
    let kind = match args.get(2).map(String::as_str) {
        Some("module") => Kind::Module,
        Some("handler") => Kind::Handler,
        Some("jsurl") => Kind::JsUrl,
        _ => Kind::Script,
    };
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match instrument(&src, &Options::new(kind, path.clone())) {
        Ok(o) => {
            println!("{}", o.code);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
