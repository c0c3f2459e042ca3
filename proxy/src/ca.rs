//! The certificate authority: created on first use (ECDSA P-256, 20 years), kept on disk with the
//! key at mode 0600, and a cache of per-host leaf certificates minted on demand.
//!
//! rcgen is built without its x509 parser, so the issuer is rebuilt from the key: the CA's
//! distinguished name is a pure function of its public key, which makes the rebuilt issuer
//! name byte-identical to the subject of the stored certificate.

use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PublicKeyData, SanType, SerialNumber,
};
use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::OnceCell;

/// File name of the CA certificate (PEM) inside the home directory.
pub const CA_CERT_FILE: &str = "shepherd-ca.pem";
/// File name of the CA private key (PKCS#8 PEM, mode 0600) inside the home directory.
pub const CA_KEY_FILE: &str = "shepherd-ca-key.pem";

const CA_LIFETIME: Duration = Duration::from_secs(20 * 365 * 86_400);
const LEAF_LIFETIME: Duration = Duration::from_secs(199 * 86_400);
/// Leaves start a day in the past so clients with a skewed clock still accept them.
const BACKDATE: Duration = Duration::from_secs(86_400);
/// Beyond this many cached hosts the cache is cleared (a browsing session rarely gets close).
const CACHE_LIMIT: usize = 10_000;

/// Errors from loading, creating or using the CA.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    /// Reading or writing the CA files failed.
    #[error("CA file {path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Certificate generation or parsing failed.
    #[error("certificate: {0}")]
    Cert(#[from] rcgen::Error),
    /// rustls refused the generated certificate.
    #[error("tls: {0}")]
    Tls(#[from] rustls::Error),
    /// The CA certificate file is not valid PEM.
    #[error("CA certificate file {0} is not a PEM certificate")]
    BadPem(PathBuf),
}

/// The Shepherd CA plus a single-flight cache of TLS server configurations per host.
pub struct CertificateAuthority {
    issuer: Issuer<'static, KeyPair>,
    cert_der: CertificateDer<'static>,
    cert_pem: String,
    /// One key for every leaf of this process: minting then costs one signature only.
    leaf_key: KeyPair,
    leaf_key_der: Vec<u8>,
    provider: Arc<CryptoProvider>,
    cache: Mutex<HashMap<String, Arc<OnceCell<Arc<ServerConfig>>>>>,
    minted: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAuthority")
            .field("spki", &self.spki_sha256_base64())
            .finish()
    }
}

fn ca_params(key: &KeyPair) -> CertificateParams {
    let mut params = CertificateParams::default();
    let digest = Sha256::digest(key.subject_public_key_info());
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "Shepherd");
    dn.push(
        DnType::CommonName,
        format!("Shepherd CA {}", hex::encode(&digest[..4])),
    );
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

fn now_offset() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

impl CertificateAuthority {
    /// Loads the CA from `dir`, creating the directory, key and certificate on first use.
    pub fn load_or_create(dir: &Path) -> Result<Self, CaError> {
        let cert_path = dir.join(CA_CERT_FILE);
        let key_path = dir.join(CA_KEY_FILE);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CaError::Io { path, source }
        };
        if cert_path.exists() && key_path.exists() {
            let key_pem = std::fs::read_to_string(&key_path).map_err(io(&key_path))?;
            let cert_pem = std::fs::read_to_string(&cert_path).map_err(io(&cert_path))?;
            let key = KeyPair::from_pem(&key_pem)?;
            let der = pem_to_der(&cert_pem).ok_or_else(|| CaError::BadPem(cert_path.clone()))?;
            return Self::from_parts(key, CertificateDer::from(der), cert_pem);
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        // A half-written CA (one file missing) is replaced as a whole.
        let _ = std::fs::remove_file(&key_path);
        let _ = std::fs::remove_file(&cert_path);
        let key = KeyPair::generate()?;
        let mut params = ca_params(&key);
        let now = now_offset();
        params.not_before = now - BACKDATE;
        params.not_after = now + CA_LIFETIME;
        let cert = params.self_signed(&key)?;
        write_private(&key_path, key.serialize_pem().as_bytes()).map_err(io(&key_path))?;
        std::fs::write(&cert_path, cert.pem()).map_err(io(&cert_path))?;
        tracing::info!(path = %cert_path.display(), "created a new Shepherd CA");
        let pem = cert.pem();
        Self::from_parts(key, cert.der().clone(), pem)
    }

    /// A CA that lives only in memory (tests, throwaway runs).
    pub fn ephemeral() -> Result<Self, CaError> {
        let key = KeyPair::generate()?;
        let mut params = ca_params(&key);
        let now = now_offset();
        params.not_before = now - BACKDATE;
        params.not_after = now + CA_LIFETIME;
        let cert = params.self_signed(&key)?;
        let pem = cert.pem();
        Self::from_parts(key, cert.der().clone(), pem)
    }

    fn from_parts(
        key: KeyPair,
        cert_der: CertificateDer<'static>,
        cert_pem: String,
    ) -> Result<Self, CaError> {
        let params = ca_params(&key);
        let issuer = Issuer::new(params, key);
        let leaf_key = KeyPair::generate()?;
        let leaf_key_der = leaf_key.serialize_der();
        Ok(Self {
            issuer,
            cert_der,
            cert_pem,
            leaf_key,
            leaf_key_der,
            provider: crate::tls::provider(),
            cache: Mutex::new(HashMap::new()),
            minted: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The CA certificate in PEM form.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate in DER form.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// Base64 of the SHA-256 of the CA's SubjectPublicKeyInfo, the value Chromium's
    /// `--ignore-certificate-errors-spki-list` expects.
    pub fn spki_sha256_base64(&self) -> String {
        let spki = self.issuer.key().subject_public_key_info();
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(spki))
    }

    /// How many leaf certificates this process has signed (tests check single-flight with it).
    pub fn minted_count(&self) -> u64 {
        self.minted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A leaf certificate for `host` (DNS name or IP literal), DER encoded.
    pub fn mint_leaf(&self, host: &str) -> Result<CertificateDer<'static>, CaError> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::OrganizationName, "Shepherd");
        dn.push(DnType::CommonName, host);
        params.distinguished_name = dn;
        params.subject_alt_names = match host.parse::<IpAddr>() {
            Ok(ip) => vec![SanType::IpAddress(ip)],
            Err(_) => vec![SanType::DnsName(host.to_string().try_into()?)],
        };
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        params.serial_number = Some(SerialNumber::from_slice(&rand::random::<[u8; 16]>()));
        let now = now_offset();
        params.not_before = now - BACKDATE;
        params.not_after = now + LEAF_LIFETIME;
        let cert = params.signed_by(&self.leaf_key, &self.issuer)?;
        self.minted
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(cert.der().clone())
    }

    /// The TLS server configuration for `host`, minted once per host even when many
    /// connections ask at the same time.
    pub async fn server_config(&self, host: &str) -> Result<Arc<ServerConfig>, CaError> {
        let key = host.to_ascii_lowercase();
        let cell = {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if cache.len() >= CACHE_LIMIT && !cache.contains_key(&key) {
                cache.clear();
            }
            cache.entry(key.clone()).or_default().clone()
        };
        cell.get_or_try_init(|| async {
            let leaf = self.mint_leaf(&key)?;
            let chain = vec![leaf, self.cert_der.clone()];
            let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key_der.clone()));
            let config = crate::tls::server_config(self.provider.clone(), chain, key_der)?;
            Ok::<_, CaError>(Arc::new(config))
        })
        .await
        .cloned()
    }
}

/// Extracts the DER bytes of the first PEM certificate block.
pub fn pem_to_der(pem: &str) -> Option<Vec<u8>> {
    pem_certs(pem).into_iter().next().map(|c| c.to_vec())
}

/// Every PEM certificate block in `pem`, as DER (blocks that do not decode are skipped).
pub fn pem_certs(pem: &str) -> Vec<CertificateDer<'static>> {
    use rustls_pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .filter_map(Result::ok)
        .collect()
}

fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(data)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;
    use rustls_pki_types::{ServerName, UnixTime};

    fn verify(root: &CertificateDer<'static>, leaf: &CertificateDer<'static>, name: &str) -> bool {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(root.clone()).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .unwrap();
        verifier
            .verify_server_cert(
                leaf,
                &[],
                &ServerName::try_from(name.to_string()).unwrap(),
                &[],
                UnixTime::now(),
            )
            .is_ok()
    }

    fn provider() -> Arc<CryptoProvider> {
        crate::tls::provider()
    }

    #[test]
    fn reloaded_ca_signs_leaves_that_chain_to_the_stored_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let first = CertificateAuthority::load_or_create(dir.path()).unwrap();
        let second = CertificateAuthority::load_or_create(dir.path()).unwrap();
        assert_eq!(first.cert_der(), second.cert_der());
        assert_eq!(first.spki_sha256_base64(), second.spki_sha256_base64());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(CA_KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leaf = second.mint_leaf("a.test").unwrap();
        assert!(verify(first.cert_der(), &leaf, "a.test"));
        assert!(!verify(first.cert_der(), &leaf, "b.test"));
        let ip = second.mint_leaf("127.0.0.1").unwrap();
        assert!(verify(first.cert_der(), &ip, "127.0.0.1"));
        let v6 = second.mint_leaf("[::1]").unwrap();
        assert!(verify(first.cert_der(), &v6, "::1"));
        let other = CertificateAuthority::ephemeral().unwrap();
        assert!(!verify(other.cert_der(), &leaf, "a.test"));
    }

    #[test]
    fn ca_is_valid_for_at_least_ten_years() {
        let ca = CertificateAuthority::ephemeral().unwrap();
        let pem = ca.cert_pem().to_string();
        assert_eq!(pem_to_der(&pem).unwrap(), ca.cert_der().to_vec());
        assert_eq!(pem_certs(&format!("{pem}{pem}")).len(), 2);
        assert!(CA_LIFETIME >= Duration::from_secs(10 * 366 * 86_400));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_requests_for_one_host_mint_once() {
        let ca = Arc::new(CertificateAuthority::ephemeral().unwrap());
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let ca = ca.clone();
            tasks.push(tokio::spawn(
                async move { ca.server_config("Same.Host").await },
            ));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        ca.server_config("other.host").await.unwrap();
        assert_eq!(ca.minted_count(), 2);
    }
}
