//! The pooled client towards origins: TCP (+ TLS with ALPN h2/http1.1) connections kept alive
//! and shared by every browser connection. Every connection attempt is counted so tests can
//! prove that replay never dials out.

use crate::body::ProxyBody;
use crate::tls::UpstreamTrust;
use http::Uri;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::ServerName;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The hyper client type used towards origins.
pub type UpstreamClient = Client<Connector, ProxyBody>;

/// Builds the pooled client; `connects` counts every outbound TCP connection attempt.
pub fn build_client(
    trust: &UpstreamTrust,
    connects: Arc<AtomicU64>,
) -> Result<UpstreamClient, rustls::Error> {
    let tls = TlsConnector::from(Arc::new(crate::tls::client_config(trust)?));
    let connector = Connector { tls, connects };
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .pool_max_idle_per_host(256)
        .timer(hyper_util::rt::TokioTimer::new())
        .pool_timer(hyper_util::rt::TokioTimer::new())
        .http2_adaptive_window(true)
        .build(connector))
}

/// Opens TCP or TLS connections for the pooled client.
#[derive(Clone)]
pub struct Connector {
    tls: TlsConnector,
    connects: Arc<AtomicU64>,
}

impl tower_service::Service<Uri> for Connector {
    type Response = UpstreamConn;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<UpstreamConn>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = self.tls.clone();
        let connects = self.connects.clone();
        Box::pin(async move {
            let https = uri.scheme_str() == Some("https") || uri.scheme_str() == Some("wss");
            let host = uri
                .host()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "URI without host"))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            connects.fetch_add(1, Ordering::Relaxed);
            let tcp =
                tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((host.as_str(), port)))
                    .await
                    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
            let _ = tcp.set_nodelay(true);
            if !https {
                return Ok(UpstreamConn {
                    io: TokioIo::new(MaybeTls::Plain(tcp)),
                    h2: false,
                });
            }
            let name = ServerName::try_from(host)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let stream = tokio::time::timeout(CONNECT_TIMEOUT, tls.connect(name, tcp))
                .await
                .map_err(|_| {
                    io::Error::new(io::ErrorKind::TimedOut, "TLS handshake timed out")
                })??;
            let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            Ok(UpstreamConn {
                io: TokioIo::new(MaybeTls::Tls(Box::new(stream))),
                h2,
            })
        })
    }
}

/// A plain or TLS stream towards an origin.
pub enum MaybeTls {
    /// `http://` origin.
    Plain(TcpStream),
    /// `https://` origin.
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for MaybeTls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_read(cx, buf),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for MaybeTls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_write(cx, buf),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            MaybeTls::Plain(s) => s.is_write_vectored(),
            MaybeTls::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_flush(cx),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(s) => Pin::new(s).poll_shutdown(cx),
            MaybeTls::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// A connection handed to the pool; reports ALPN so h2 origins are multiplexed.
pub struct UpstreamConn {
    io: TokioIo<MaybeTls>,
    h2: bool,
}

impl Connection for UpstreamConn {
    fn connected(&self) -> Connected {
        if self.h2 {
            Connected::new().negotiated_h2()
        } else {
            Connected::new()
        }
    }
}

impl hyper::rt::Read for UpstreamConn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for UpstreamConn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        hyper::rt::Write::is_write_vectored(&self.io)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Opens a raw (not pooled) connection for WebSocket tunnels: TLS with ALPN http/1.1 only,
/// since the upgrade handshake is an HTTP/1.1 feature.
pub async fn connect_raw(
    uri: &Uri,
    client_config: &Arc<rustls::ClientConfig>,
    connects: &AtomicU64,
) -> io::Result<MaybeTls> {
    let https = matches!(uri.scheme_str(), Some("https") | Some("wss"));
    let host = uri
        .host()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "URI without host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    connects.fetch_add(1, Ordering::Relaxed);
    let tcp = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((host.as_str(), port)))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
    let _ = tcp.set_nodelay(true);
    if !https {
        return Ok(MaybeTls::Plain(tcp));
    }
    let mut config = (**client_config).clone();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let name =
        ServerName::try_from(host).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let stream = TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await?;
    Ok(MaybeTls::Tls(Box::new(stream)))
}
