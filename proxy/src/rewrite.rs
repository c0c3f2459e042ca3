//! The rewrite hook the instrumentation plugs into. The proxy decides *when* a body passes
//! through it (after decoding, never for bodies it does not touch); the implementation decides
//! *what* changes, and knows what it instruments for (the proxy has no notion of a mode). HTML
//! is streamed (chunks in, chunks out) so documents render progressively;
//! scripts are rewritten whole, which lets the implementation cache by content hash.

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};

/// What the rewriter sees about a response before its body.
#[derive(Debug)]
pub struct ResponseMeta<'a> {
    /// Request method.
    pub method: &'a Method,
    /// Absolute request URL.
    pub url: &'a str,
    /// Request headers (as the browser sent them).
    pub request_headers: &'a HeaderMap,
    /// Response status.
    pub status: StatusCode,
    /// The page credential of this response's origin: what the injected runtime presents on
    /// `/__shepherd/trace` and `/__shepherd/instrument` (written into the runtime's URL).
    pub page_token: &'a str,
    /// The version of the runtime the proxy serves now (`v=` of the runtime's URL, which
    /// lets the browser keep the script; see `RuntimeScript`).
    pub runtime_version: &'a str,
    /// For an HTML document ([`Rewriter::html`]): a hold token drawn for this document alone
    /// (32 hex digits; empty in [`Rewriter::plan`]). A rewriter that makes the parser's
    /// resources holdable marks their URLs with it (`__shepherd_hold=TOKEN.N`, held like the
    /// page's own holds, `page_holds`), writes hold points into its output
    /// ([`hold_point`](crate::page_holds::hold_point)) and tells the page the token.
    pub hold_token: &'a str,
}

/// What to do with a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteKind {
    /// Pass the body through untouched (still encoded, Content-Length kept).
    None,
    /// Stream the decoded body through [`Rewriter::html`].
    Html,
    /// Collect the decoded body and pass it to [`Rewriter::script`].
    Script {
        /// Whether the body is an ES module (the rewriter knows from the request, e.g.
        /// `Sec-Fetch-Mode: cors` for a script destination); decides how it is parsed.
        module: bool,
    },
}

/// A whole script body handed to [`Rewriter::script`] (owned: it runs on a blocking thread).
#[derive(Debug)]
pub struct ScriptJob {
    /// Absolute request URL.
    pub url: String,
    /// ES module rather than classic script.
    pub module: bool,
    /// The response's `Content-Type` (its charset decides the decoding of classic scripts).
    pub content_type: Option<String>,
    /// The request's `Sec-Fetch-Dest` (`script`, `worker`, `serviceworker`…; empty when
    /// absent): a worker's script must carry what a document gets from its HTML.
    pub fetch_dest: String,
    /// The page credential of the script's origin (what code running there presents).
    pub page_token: String,
    /// The decoded body.
    pub source: Bytes,
}

/// What [`Rewriter::rewrite_script`] made of a script.
#[derive(Debug)]
pub struct RewrittenScript {
    /// The bytes to serve.
    pub body: Bytes,
    /// When the body was rewritten and a source map of it exists: the map's id (ASCII letters,
    /// digits, `-` and `_` only), served at `/__shepherd/map/<id>.map` through
    /// [`Rewriter::source_map`].
    pub source_map_id: Option<String>,
}

/// A streaming HTML rewriter for one document.
pub trait HtmlStream: Send {
    /// Consumes the next decoded chunk, returns the bytes ready to send.
    fn feed(&mut self, chunk: &[u8]) -> Vec<u8>;
    /// End of the document: returns the remaining bytes.
    fn finish(&mut self) -> Vec<u8>;

    /// Whether the output may hold hold points of the document's token (the proxy then cuts
    /// the document at each and sends the rest once the page released it).
    fn hold_points(&self) -> bool {
        false
    }
}

/// The hook. Every method has an identity default, so `()` is a valid rewriter.
pub trait Rewriter: Send + Sync + 'static {
    /// Chooses the treatment of a response and may edit its headers (for example the CSP, so
    /// the injected runtime may run). Called for every response of an intercepted origin.
    fn plan(&self, meta: &ResponseMeta<'_>, headers: &mut HeaderMap) -> RewriteKind {
        let _ = (meta, headers);
        RewriteKind::None
    }

    /// A streaming rewriter for an HTML document ([`RewriteKind::Html`]). It may still edit
    /// the response headers (the document's CSP decides how its inline code is treated, so
    /// the policy is adjusted together with the stream that obeys it).
    fn html(&self, meta: &ResponseMeta<'_>, headers: &mut HeaderMap) -> Box<dyn HtmlStream> {
        let _ = (meta, headers);
        Box::new(IdentityHtml)
    }

    /// Rewrites a whole script ([`RewriteKind::Script`]); runs on a blocking thread.
    fn script(&self, job: ScriptJob) -> Bytes {
        job.source
    }

    /// Like [`script`](Self::script), and also names the source map of the rewritten code
    /// (the proxy then points the browser at it with a `SourceMap` header). The default
    /// rewrites through [`script`](Self::script) without a map.
    fn rewrite_script(&self, job: ScriptJob) -> RewrittenScript {
        RewrittenScript {
            body: self.script(job),
            source_map_id: None,
        }
    }

    /// The source map (JSON) with id `map_id` for the script at `script_url`, for
    /// `GET /__shepherd/map/<id>.map`; `None` answers 404 (unknown or evicted).
    fn source_map(&self, map_id: &str, script_url: &str) -> Option<String> {
        let _ = (map_id, script_url);
        None
    }

    /// Instruments dynamic code for `POST /__shepherd/instrument` (`kind` is `script`,
    /// `module`, `handler`, or `html` for an HTML fragment); `None` means "unchanged".
    fn instrument(&self, kind: &str, source: &str) -> Option<String> {
        let _ = (kind, source);
        None
    }
}

/// The identity rewriter.
impl Rewriter for () {}

/// An HTML stream that changes nothing.
#[derive(Debug, Default)]
pub struct IdentityHtml;

impl HtmlStream for IdentityHtml {
    fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        chunk.to_vec()
    }
    fn finish(&mut self) -> Vec<u8> {
        Vec::new()
    }
}
