//! The CA page (`http://shepherd.ca/`) and the CA downloads: how a browser comes to trust
//! Shepherd's certificates. Reachable without credentials, before a browser is configured.

use crate::body::ProxyBody;
use crate::ca::CertificateAuthority;
use crate::respond::with_type;
use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Response, StatusCode};

const CA_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Shepherd CA</title></head>
<body>
<h1>Shepherd certificate authority</h1>
<p>Shepherd intercepts HTTPS to instrument pages. Browsers accept its certificates once they
trust this CA, or when started with <code>--ignore-certificate-errors-spki-list=SPKI</code>
(print SPKI with <code>shepherd ca spki</code>).</p>
<ul>
<li><a href="/__shepherd/ca.pem">shepherd-ca.pem</a> (PEM: Linux, Firefox, Android)</li>
<li><a href="/__shepherd/ca.der">shepherd-ca.cer</a> (DER: Windows, macOS, iOS)</li>
</ul>
<h2>Install</h2>
<ul>
<li>Chromium on Linux: Settings, Privacy and security, Security, Manage certificates,
Authorities, Import, then tick "Trust this certificate for identifying websites".
Or: <code>certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n shepherd -i shepherd-ca.pem</code>.</li>
<li>Firefox: Settings, Privacy &amp; Security, Certificates, View Certificates, Authorities,
Import.</li>
<li>Debian/Ubuntu system store: copy to <code>/usr/local/share/ca-certificates/shepherd.crt</code>
and run <code>update-ca-certificates</code>.</li>
<li>macOS: open the .cer file, then in Keychain Access set it to "Always Trust".</li>
<li>Windows: open the .cer file, Install Certificate, "Trusted Root Certification Authorities".</li>
</ul>
<p>Anyone holding the CA key can impersonate any site to a browser that trusts it: the key
stays on this machine (mode 0600); remove the CA from the browser when you are done.</p>
</body></html>
"#;

/// The CA page and downloads (`http://shepherd.ca/`, `/__shepherd/ca*`); no secret needed.
pub(crate) fn answer(ca: &CertificateAuthority, path: &str) -> Response<ProxyBody> {
    let tail = path.trim_start_matches("/__shepherd");
    match tail {
        "/ca.pem" | "/cert.pem" => {
            let mut r = with_type(
                StatusCode::OK,
                "application/x-pem-file",
                ProxyBody::full(ca.cert_pem().to_string()),
            );
            r.headers_mut().insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"shepherd-ca.pem\""),
            );
            r
        }
        "/ca.der" | "/ca.cer" | "/cert.cer" => {
            let mut r = with_type(
                StatusCode::OK,
                "application/x-x509-ca-cert",
                ProxyBody::full(ca.cert_der().to_vec()),
            );
            r.headers_mut().insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"shepherd-ca.cer\""),
            );
            r
        }
        _ => with_type(
            StatusCode::OK,
            "text/html; charset=utf-8",
            ProxyBody::full(Bytes::from_static(CA_PAGE.as_bytes())),
        ),
    }
}
