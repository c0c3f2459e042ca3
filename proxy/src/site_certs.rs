//! The site's own certificates (`shepherd serve --reverse --tls-cert --tls-key`): a reverse
//! proxy in front of a staging site shows visitors the site's certificate, not a leaf of
//! Shepherd's CA. Several pairs serve several names: a handshake gets the first certificate
//! valid for its SNI name (wildcards as browsers match them), and one without SNI, or with a
//! name none covers, the first pair's (as a web server's default site).

use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::ParsedCertificate;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One certificate chain with its key.
struct SiteCert {
    /// Where it was read from, for messages.
    label: String,
    /// The leaf, to match names against.
    leaf: CertificateDer<'static>,
    /// The TLS configuration presenting it (h2 and http/1.1 offered).
    config: Arc<ServerConfig>,
}

/// The site's certificates, in the order given.
#[derive(Default)]
pub struct SiteCertificates {
    certs: Vec<SiteCert>,
}

impl std::fmt::Debug for SiteCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.certs.iter().map(|c| &c.label))
            .finish()
    }
}

impl SiteCertificates {
    /// Reads each `(certificate chain, private key)` pair of PEM files. Every error names the
    /// file and what is wrong with it (no certificate, no key, a key that is not the
    /// certificate's).
    pub fn load(pairs: &[(PathBuf, PathBuf)]) -> Result<SiteCertificates, String> {
        let mut certs = Vec::new();
        for (cert, key) in pairs {
            let read = |p: &Path| {
                std::fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))
            };
            let label = format!("{} + {}", cert.display(), key.display());
            certs.push(SiteCert::from_pem(&read(cert)?, &read(key)?, label)?);
        }
        Ok(SiteCertificates { certs })
    }

    /// From PEM texts (tests, and callers that hold them already).
    pub fn from_pem(pairs: &[(&str, &str)]) -> Result<SiteCertificates, String> {
        let certs = pairs
            .iter()
            .enumerate()
            .map(|(i, (cert, key))| SiteCert::from_pem(cert, key, format!("pair {}", i + 1)))
            .collect::<Result<_, _>>()?;
        Ok(SiteCertificates { certs })
    }

    /// Whether no certificate is configured.
    pub fn is_empty(&self) -> bool {
        self.certs.is_empty()
    }

    /// The configuration for a handshake naming `sni`: the first certificate valid for it,
    /// else (no name, or no certificate covers it) the first one when `fallback`; `None`
    /// when no certificate serves it.
    pub(crate) fn for_name(&self, sni: Option<&str>, fallback: bool) -> Option<Arc<ServerConfig>> {
        let matched = sni
            .and_then(|name| ServerName::try_from(name.to_ascii_lowercase()).ok())
            .and_then(|name| {
                self.certs.iter().find(|c| {
                    ParsedCertificate::try_from(&c.leaf)
                        .and_then(|p| rustls::client::verify_server_name(&p, &name))
                        .is_ok()
                })
            });
        matched
            .or_else(|| self.certs.first().filter(|_| fallback))
            .map(|c| c.config.clone())
    }
}

impl SiteCert {
    fn from_pem(cert_pem: &str, key_pem: &str, label: String) -> Result<SiteCert, String> {
        use rustls::pki_types::pem::PemObject;
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("{label}: the certificate file is not PEM: {e}"))?;
        let Some(leaf) = chain.first().cloned() else {
            return Err(format!("{label}: no certificate in the certificate file"));
        };
        ParsedCertificate::try_from(&leaf)
            .map_err(|e| format!("{label}: the certificate cannot be read: {e}"))?;
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| {
            format!("{label}: no private key (PKCS#8, PKCS#1 or SEC1 PEM) in the key file: {e}")
        })?;
        let config = crate::tls::server_config(crate::tls::provider(), chain, key)
            .map_err(|e| format!("{label}: the key does not fit the certificate: {e}"))?;
        Ok(SiteCert {
            label,
            leaf,
            config: Arc::new(config),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(names: &[&str]) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn leaf_of(config: &Arc<ServerConfig>, certs: &SiteCertificates) -> usize {
        certs
            .certs
            .iter()
            .position(|c| Arc::ptr_eq(&c.config, config))
            .unwrap()
    }

    #[test]
    fn the_name_picks_the_certificate_and_others_get_the_first() {
        let a = pair(&["staging.example"]);
        let b = pair(&["*.shop.example", "shop.example"]);
        let certs = SiteCertificates::from_pem(&[(&a.0, &a.1), (&b.0, &b.1)]).unwrap();
        let pick = |sni: Option<&str>| leaf_of(&certs.for_name(sni, true).unwrap(), &certs);
        assert_eq!(pick(Some("staging.example")), 0);
        assert_eq!(pick(Some("www.shop.example")), 1);
        assert_eq!(pick(Some("SHOP.example")), 1);
        assert_eq!(
            pick(Some("a.b.shop.example")),
            0,
            "a wildcard covers one label"
        );
        assert_eq!(pick(None), 0);
        assert!(certs.for_name(Some("other.example"), false).is_none());
        assert!(certs.for_name(None, false).is_none());
    }

    #[test]
    fn bad_pairs_say_what_is_wrong() {
        let a = pair(&["a.example"]);
        let b = pair(&["b.example"]);
        let err = |c: &str, k: &str| SiteCertificates::from_pem(&[(c, k)]).unwrap_err();
        assert!(
            err("", &a.1).contains("no certificate"),
            "{}",
            err("", &a.1)
        );
        assert!(
            err(&a.0, "").contains("no private key"),
            "{}",
            err(&a.0, "")
        );
        assert!(
            err(&a.0, &b.1).contains("does not fit"),
            "{}",
            err(&a.0, &b.1)
        );
    }
}
