//! `shepherd ca export|spki|path`: the interception CA (created on first use).

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand};
use shepherd_proxy::CertificateAuthority;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Print or export the CA that signs intercepted sites' certificates.
#[derive(ClapArgs)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: CaCommand,
}

#[derive(Subcommand)]
enum CaCommand {
    /// Write the CA certificate (PEM by default) to a file or stdout.
    Export {
        /// Output file (default: stdout).
        #[arg(long)]
        out: Option<PathBuf>,
        /// DER instead of PEM (Windows/macOS/iOS installers).
        #[arg(long)]
        der: bool,
    },
    /// Print the base64 SHA-256 of the CA's public key, for Chromium's
    /// `--ignore-certificate-errors-spki-list`.
    Spki,
    /// Print the directory holding the CA.
    Path,
}

/// Where the CA lives: `--home`/`$SHEPHERD_HOME`, else `./certs` in a checkout, else the user
/// data directory (`$XDG_DATA_HOME/shepherd` or `~/.local/share/shepherd`).
pub(crate) fn ca_dir(home: Option<PathBuf>) -> PathBuf {
    if let Some(h) = home {
        return h;
    }
    let checkout = PathBuf::from("certs");
    if checkout.join("README.md").exists() {
        return checkout;
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("shepherd");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".local/share/shepherd"),
        None => PathBuf::from(".shepherd"),
    }
}

/// Loads the CA, creating it on first use.
pub(crate) fn load_ca(home: Option<PathBuf>) -> anyhow::Result<CertificateAuthority> {
    let dir = ca_dir(home);
    CertificateAuthority::load_or_create(&dir)
        .with_context(|| format!("loading the CA from {}", dir.display()))
}

pub(crate) fn run(args: Args, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match args.command {
        CaCommand::Path => {
            println!("{}", ca_dir(home).display());
        }
        CaCommand::Spki => {
            let ca = load_ca(home)?;
            println!("{}", ca.spki_sha256_base64());
        }
        CaCommand::Export { out, der } => {
            let ca = load_ca(home)?;
            let bytes: Vec<u8> = if der {
                ca.cert_der().to_vec()
            } else {
                ca.cert_pem().as_bytes().to_vec()
            };
            match out {
                Some(path) => std::fs::write(&path, &bytes)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => std::io::stdout().write_all(&bytes)?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
