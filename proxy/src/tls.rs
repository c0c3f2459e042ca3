//! rustls configurations: the server side shown to the browser (per host, from the CA) and the
//! client side used towards origins (webpki roots, extra roots, or an explicit insecure mode).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use std::sync::Arc;

/// ALPN protocols offered to browsers and origins, in preference order.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// The crypto provider used everywhere (ring).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration presenting `chain` with `key`, offering h2 and http/1.1.
pub fn server_config(
    provider: Arc<CryptoProvider>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ServerConfig, rustls::Error> {
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// How upstream (origin) certificates are checked.
#[derive(Debug, Clone, Default)]
pub enum UpstreamTrust {
    /// The Mozilla roots from `webpki-roots` (the default).
    #[default]
    WebPki,
    /// The webpki roots plus these extra roots (`--upstream-ca`, staging servers).
    WithExtraRoots(Vec<CertificateDer<'static>>),
    /// Only these roots (tests with a private origin CA).
    OnlyRoots(Vec<CertificateDer<'static>>),
    /// No verification at all (`--insecure-upstream`): logged loudly at start.
    Insecure,
}

/// The client configuration used towards origins.
pub fn client_config(trust: &UpstreamTrust) -> Result<ClientConfig, rustls::Error> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let mut roots = RootCertStore::empty();
    let mut config = match trust {
        UpstreamTrust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
            .with_no_client_auth(),
        UpstreamTrust::WebPki => {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        UpstreamTrust::WithExtraRoots(extra) => {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            for c in extra {
                roots.add(c.clone())?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        UpstreamTrust::OnlyRoots(only) => {
            for c in only {
                roots.add(c.clone())?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// Accepts any certificate; signatures are still checked so the handshake is well formed.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
