//! hudsucker's no-op MITM proxy, configured like `shepherd serve` in `scripts/bench-proxy`:
//! rcgen leaf certificates (ECDSA P-256, cached), rustls on both sides with Shepherd's crypto
//! provider (ring, as in `proxy/src/tls.rs`), HTTP/1.1 and HTTP/2, upstream verification against
//! the bench origin's private CA. It is the reference point Shepherd's proxy figures are
//! compared with, measured on the same machine in the same run.
//!
//! rcgen itself (hudsucker enables its default aws-lc backend) only signs the CA and one leaf
//! per host, which is cached; every handshake and record goes through the ring provider.
//!
//! Usage: hudsucker-baseline LISTEN_ADDR ORIGIN_CA_PEM

use hudsucker::{
    Proxy,
    certificate_authority::RcgenAuthority,
    rcgen::{BasicConstraints, CertificateParams, DistinguishedName, IsCa, Issuer, KeyPair},
    rustls::{
        ClientConfig, RootCertStore,
        crypto::ring,
        pki_types::{CertificateDer, pem::PemObject},
    },
};
use std::{net::SocketAddr, sync::Arc};

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("hudsucker-baseline: {what}: {e}");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(listen), Some(origin_ca)) = (args.get(1), args.get(2)) else {
        fail("usage", "hudsucker-baseline LISTEN_ADDR ORIGIN_CA_PEM")
    };
    let addr: SocketAddr = listen.parse().unwrap_or_else(|e| fail("listen address", e));

    let key = KeyPair::generate().unwrap_or_else(|e| fail("CA key", e));
    let mut params = CertificateParams::default();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name = DistinguishedName::new();
    let ca = RcgenAuthority::new(
        Issuer::new(params, key),
        1_000,
        ring::default_provider(),
    );

    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(origin_ca).unwrap_or_else(|e| fail("origin CA", e)) {
        let cert = cert.unwrap_or_else(|e| fail("origin CA", e));
        roots.add(cert).unwrap_or_else(|e| fail("origin CA", e));
    }
    let tls = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| fail("TLS versions", e))
        .with_root_certificates(roots)
        .with_no_client_auth();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .build();

    let proxy = Proxy::builder()
        .with_addr(addr)
        .with_ca(ca)
        .with_http_connector(https)
        .build()
        .unwrap_or_else(|e| fail("proxy", e));
    if let Err(e) = proxy.start().await {
        fail("proxy stopped", e);
    }
}
