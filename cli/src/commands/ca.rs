//! `shepherd ca export|spki|path`: the interception CA (created on first use).

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand};
use shepherd_proxy::CertificateAuthority;
use std::io::Write;
use std::path::{Path, PathBuf};
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
/// data directory (`dirs::data_dir()`: `$XDG_DATA_HOME/shepherd` when that is absolute, else
/// `~/.local/share/shepherd`), else `./.shepherd`.
pub(crate) fn ca_dir(home: Option<PathBuf>) -> PathBuf {
    ca_dir_from(home, Path::new("certs"), dirs::data_dir)
}

/// [`ca_dir`] with the checkout's `certs` directory and the data directory given, so the order
/// can be tested without touching the environment. `data_dir` is only asked when needed.
fn ca_dir_from(
    home: Option<PathBuf>,
    checkout: &Path,
    data_dir: impl FnOnce() -> Option<PathBuf>,
) -> PathBuf {
    if let Some(h) = home {
        return h;
    }
    if checkout.join("README.md").exists() {
        return checkout.to_path_buf();
    }
    match data_dir() {
        Some(d) => d.join("shepherd"),
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

#[cfg(test)]
mod tests {
    use super::ca_dir_from;
    use std::path::{Path, PathBuf};

    #[test]
    fn home_then_checkout_then_data_dir() {
        let dir = tempfile::tempdir().expect("tempdir");
        let checkout = dir.path().join("certs");
        let data = || Some(PathBuf::from("/data"));
        let asked = || -> Option<PathBuf> { panic!("the data directory is not needed") };
        // `--home` / `$SHEPHERD_HOME` wins over everything.
        assert_eq!(
            ca_dir_from(Some("/h".into()), &checkout, asked),
            Path::new("/h")
        );
        // Outside a checkout: the data directory.
        assert_eq!(
            ca_dir_from(None, &checkout, data),
            Path::new("/data/shepherd")
        );
        assert_eq!(
            ca_dir_from(None, &checkout, || None),
            Path::new(".shepherd")
        );
        // A checkout's `certs/README.md` marks it.
        std::fs::create_dir(&checkout).expect("mkdir");
        std::fs::write(checkout.join("README.md"), "").expect("write");
        assert_eq!(ca_dir_from(None, &checkout, asked), checkout);
        assert_eq!(
            ca_dir_from(Some("/h".into()), &checkout, asked),
            Path::new("/h")
        );
    }
}
