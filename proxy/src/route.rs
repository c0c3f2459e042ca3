//! Routing of one request on an intercepted origin: the CA page, the reserved namespace, a
//! WebSocket upgrade (to the source), or the HTTP pipeline.

use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::state::{Shared, Target};
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The special host that serves the CA page (`http://shepherd.ca/`).
pub(crate) const CA_HOST: &str = "shepherd.ca";

/// Routes one request for `target`. Boxed: hyper keeps an HTTP/1.1 connection's request future
/// in an allocation sized for it for as long as the connection lives, idle or not, and the
/// routed future (pipeline, upstream request, recording) is kilobytes where a box is a pointer.
pub(crate) fn handle(
    shared: Arc<Shared>,
    target: Target,
    req: Request<Incoming>,
) -> Pin<Box<dyn Future<Output = Response<ProxyBody>> + Send>> {
    Box::pin(route(shared, target, req))
}

async fn route(shared: Arc<Shared>, target: Target, req: Request<Incoming>) -> Response<ProxyBody> {
    let req = {
        let (parts, body) = req.into_parts();
        let body = ClientBody::new(body, shared.limits.body_timeout, || {
            target
                .url(&parts.uri)
                .map_or_else(|_| parts.uri.to_string(), |u| u.to_string())
        });
        Request::from_parts(parts, body)
    };
    if target.host() == CA_HOST {
        return crate::ca_page::answer(&shared.ca, req.uri().path());
    }
    if req.uri().path().starts_with("/__shepherd/") {
        return crate::reserved::handle(&shared, &target, req).await;
    }
    let Ok(url) = target.url(req.uri()) else {
        return crate::respond::simple(StatusCode::BAD_REQUEST, "bad request target\n");
    };
    if is_websocket_upgrade(&req) {
        return shared.source.websocket(&shared.stats, url, req).await;
    }
    crate::pipeline::http(&shared, &target, url, req).await
}

/// Whether `req` asks for a WebSocket upgrade (HTTP/1.1 style).
fn is_websocket_upgrade<B>(req: &Request<B>) -> bool {
    req.version() <= http::Version::HTTP_11
        && req
            .headers()
            .get(http::header::UPGRADE)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"))
}
