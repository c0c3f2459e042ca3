//! Streaming HTML instrumentation on lol_html: runtime bootstrap injection, and in record mode
//! inline scripts, `on*` attributes and `javascript:` URLs through the JS pass; SRI and CSP
//! adjustments. Output is byte-identical to the input outside the edited tokens.

use crate::attrs::{js_url_body, js_url_encode};
use crate::cache::ScriptCache;
use crate::csp::{self, CspHeader, InlineVerdict, Policies, RuntimeSource};
use crate::encoding::{self, DetectedEncoding, PRESCAN_BYTES};
use crate::entities;
use crate::gates::{GateState, HtmlGates};
use crate::jspass::Flags;
use crate::mode::{Mode, ScriptKind};
use crate::prolog::{Prolog, Scan};
use crate::report::{Change, Report};
use crate::script_type::{is_event_handler, is_navigation_url_attr, script_kind};
use base64::Engine as _;
use encoding_rs::{Decoder, REPLACEMENT, UTF_8};
use lol_html::html_content::{ContentType, DocumentEnd, EndTag, TextChunk, TextType};
use lol_html::send::{Element, HtmlRewriter, Settings};
use lol_html::{AsciiCompatibleEncoding, MemorySettings, OutputSink, element, end, text};
use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard};

/// Reserved path of the runtime script served by the proxy.
pub const RUNTIME_PATH: &str = "/__shepherd/runtime.js";

/// Configuration of one document's instrumentation.
#[derive(Debug, Clone)]
pub struct HtmlConfig {
    /// Record/replay rewrite JavaScript; repair only injects the runtime.
    pub mode: Mode,
    /// The document origin's page credential, written into the runtime URL (`t` parameter):
    /// what the runtime presents when it uploads the trace or asks for dynamic code to be
    /// instrumented.
    pub page_token: String,
    /// The runtime's version, named in its URL (`v=`) so the browser may keep the script;
    /// empty: not named.
    pub runtime_version: String,
    /// `scheme://host[:port]` of the document, used for CSP host-sources.
    pub origin: Option<String>,
    /// The response's `Content-Type` value (its charset takes part in encoding detection).
    pub content_type: Option<String>,
    /// Nonce for the runtime script when a CSP needs one (random when None).
    pub nonce: Option<String>,
    /// Cache for inline code (record mode); a private one is made when None.
    pub cache: Option<Arc<ScriptCache>>,
    /// Memory limit of the rewriter's buffers; past it the rest of the document is passed
    /// through unmodified.
    pub max_memory: usize,
    /// An HTML fragment, not a document: markup a page hands to `document.write`, `innerHTML`
    /// and the like, instrumented at run time (the `html` kind of the instrument endpoint).
    /// The runtime is already in the document, so nothing is injected; the input is UTF-8 text
    /// (no encoding detection: a `<meta charset>` in it changes nothing); CSP headers are not
    /// the fragment's business; `srcdoc` documents are left alone (they would need the
    /// runtime tag); an inline script is instrumented only when its end tag is
    /// in the fragment (a `write` may split a script over several calls, and instrumenting
    /// half of one could change what the whole means).
    pub fragment: bool,
    /// Repair mode: the parser's resources a policy may postpone, made holdable
    /// ([`HtmlGates`]; `None`: nothing gated).
    pub gates: Option<HtmlGates>,
}

impl HtmlConfig {
    /// Defaults for `mode` and the page credential.
    pub fn new(mode: Mode, page_token: impl Into<String>) -> Self {
        HtmlConfig {
            mode,
            page_token: page_token.into(),
            runtime_version: String::new(),
            origin: None,
            content_type: None,
            nonce: None,
            cache: None,
            max_memory: 32 * 1024 * 1024,
            fragment: false,
            gates: None,
        }
    }
}

/// What the handlers share (lol_html's `Send` handlers must own their state).
struct State {
    mode: Mode,
    ascii_only: bool,
    certain: bool,
    cache: Arc<ScriptCache>,
    policies: Policies,
    script: Option<PendingScript>,
    report: Report,
    /// Configuration for `<iframe srcdoc>` documents (nonce resolved, cache shared).
    nested: HtmlConfig,
    /// Whether the runtime tag carries the nonce (copied to nested documents).
    runtime_nonce: bool,
    /// Nesting level of `srcdoc` documents.
    depth: u8,
    /// Instrumenting a fragment ([`HtmlConfig::fragment`]).
    fragment: bool,
    /// The parser gates of this document ([`HtmlConfig::gates`]).
    gates: Option<GateState>,
}

/// `srcdoc` documents nested deeper than this are left as they are (bounded recursion).
const MAX_SRCDOC_DEPTH: u8 = 4;

/// An inline script whose text is being collected.
struct PendingScript {
    kind: ScriptKind,
    /// Raw text as it appeared in the document.
    text: String,
    /// Foreign content (SVG): text is character data with entities, except CDATA sections.
    data: bool,
    /// For foreign content: the raw text split by whether entities apply (false in CDATA).
    segments: Vec<(bool, String)>,
    /// An HTML script whose text was not reported as script data.
    unexpected: bool,
}

#[derive(Clone)]
struct Shared(Arc<Mutex<State>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl OutputSink for Sink {
    fn handle_chunk(&mut self, chunk: &[u8]) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(chunk);
    }
}

enum Stage {
    /// Collecting the first bytes for encoding detection.
    Sniff(Vec<u8>),
    /// Rewriting; `decoder` transcodes non-ASCII-compatible input to UTF-8 first, `inj`
    /// splices the runtime tag into the stream before lol_html sees it.
    Rewrite {
        rw: Box<HtmlRewriter<'static, Sink>>,
        decoder: Option<Decoder>,
        inj: Injector,
    },
    /// Passing bytes through (after a bail-out, or for undecodable documents).
    Raw {
        decoder: Option<Decoder>,
    },
    Finished,
}

/// Instruments one HTML document, chunk by chunk. Call [`adjust_csp_header`] for each CSP
/// header before the first [`write`].
///
/// [`adjust_csp_header`]: HtmlInstrumenter::adjust_csp_header
/// [`write`]: HtmlInstrumenter::write
pub struct HtmlInstrumenter {
    cfg: HtmlConfig,
    nonce: String,
    runtime_nonce: bool,
    shared: Shared,
    out: Arc<Mutex<Vec<u8>>>,
    stage: Stage,
    output_content_type: Option<String>,
}

impl std::fmt::Debug for HtmlInstrumenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HtmlInstrumenter")
            .field("mode", &self.cfg.mode)
            .finish()
    }
}

impl HtmlInstrumenter {
    /// A new instrumenter for one document.
    pub fn new(cfg: HtmlConfig) -> Self {
        let nonce = cfg.nonce.clone().unwrap_or_else(|| {
            let bytes: [u8; 18] = rand::random();
            base64::engine::general_purpose::STANDARD.encode(bytes)
        });
        let cache = match &cfg.cache {
            Some(c) => c.clone(),
            None => Arc::new(private_cache(cfg.mode)),
        };
        let mut nested = cfg.clone();
        nested.nonce = Some(nonce.clone());
        nested.cache = Some(cache.clone());
        nested.content_type = Some("text/html; charset=utf-8".into());
        nested.fragment = false;
        // A srcdoc document is an attribute, not a stream the proxy can stop.
        nested.gates = None;
        let state = State {
            nested,
            runtime_nonce: false,
            depth: 0,
            fragment: cfg.fragment,
            gates: cfg
                .gates
                .clone()
                .filter(|g| g.any() && !cfg.fragment)
                .map(GateState::new),
            mode: cfg.mode,
            ascii_only: false,
            certain: true,
            cache,
            policies: Policies::default(),
            script: None,
            report: Report::default(),
        };
        HtmlInstrumenter {
            nonce,
            runtime_nonce: false,
            shared: Shared(Arc::new(Mutex::new(state))),
            out: Arc::new(Mutex::new(Vec::new())),
            stage: Stage::Sniff(Vec::new()),
            output_content_type: cfg.content_type.clone(),
            cfg,
        }
    }

    /// Adjusts one CSP header value (call before the first `write`) and returns the value to
    /// send. Enforced policies also decide which inline code may be rewritten.
    pub fn adjust_csp_header(&mut self, value: &str, header: CspHeader) -> String {
        let rt = RuntimeSource {
            origin: self.cfg.origin.as_deref(),
            path: RUNTIME_PATH,
            nonce: &self.nonce,
        };
        let (new, changes, needs_nonce) = csp::adjust(value, header, &rt);
        self.runtime_nonce |= needs_nonce;
        let mut st = self.shared.lock();
        if header == CspHeader::Enforce {
            st.policies.add(value);
        }
        st.report
            .changes
            .extend(changes.into_iter().map(Change::Csp));
        new
    }

    /// The `Content-Type` to send: changed only when the document is transcoded to UTF-8.
    /// Known once the first [`write`](Self::write) returned output (or after `finish`).
    pub fn content_type(&self) -> Option<&str> {
        self.output_content_type.as_deref()
    }

    /// The runtime `<script>` element for this document.
    fn runtime_tag(&self) -> String {
        let nonce = if self.runtime_nonce {
            format!(" nonce=\"{}\"", self.nonce)
        } else {
            String::new()
        };
        // The parser gates' token travels in the fragment: the browser never sends it, and
        // the runtime's URL (and cache entry) stays the same for every document.
        let gates = match &self.cfg.gates {
            Some(g) if g.any() && !self.cfg.fragment => format!("#g={}", url_component(&g.token)),
            _ => String::new(),
        };
        let version = if self.cfg.runtime_version.is_empty() {
            String::new()
        } else {
            format!("&amp;v={}", url_component(&self.cfg.runtime_version))
        };
        format!(
            "<script src=\"{RUNTIME_PATH}?t={}&amp;m={}{version}{gates}\"{nonce}></script>",
            url_component(&self.cfg.page_token),
            self.cfg.mode.as_str()
        )
    }

    /// Feeds a chunk of the response body; returns the output ready so far.
    pub fn write(&mut self, chunk: &[u8]) -> Result<Vec<u8>, crate::error::Error> {
        if let Stage::Sniff(buf) = &mut self.stage {
            buf.extend_from_slice(chunk);
            let header_charset = self
                .cfg
                .content_type
                .as_deref()
                .and_then(encoding::charset_from_content_type)
                .is_some();
            // A `<meta charset>` complete within what has arrived decides as the whole
            // prescan would (the first declaration wins): waiting for 1024 bytes would hold a
            // small document, or the first part the explorer releases, until its end.
            let declared = buf.len() < PRESCAN_BYTES
                && buf
                    .iter()
                    .rposition(|&b| b == b'>')
                    .is_some_and(|gt| encoding::prescan(&buf[..=gt]).is_some());
            let ready = buf.len() >= PRESCAN_BYTES
                || (header_charset && buf.len() >= 3)
                || declared
                || (self.cfg.fragment && !buf.is_empty());
            if !ready {
                return Ok(Vec::new());
            }
            let buf = std::mem::take(buf);
            self.start(&buf)?;
        } else {
            self.feed(chunk, false)?;
        }
        Ok(self.take())
    }

    /// Ends the document; returns the remaining output.
    pub fn end(self) -> Result<Vec<u8>, crate::error::Error> {
        self.finish().map(|(out, _)| out)
    }

    /// Ends the document; returns the remaining output and the report.
    pub fn finish(mut self) -> Result<(Vec<u8>, Report), crate::error::Error> {
        if let Stage::Sniff(buf) = &mut self.stage {
            let buf = std::mem::take(buf);
            self.start(&buf)?;
        }
        self.feed(&[], true)?;
        match std::mem::replace(&mut self.stage, Stage::Finished) {
            Stage::Rewrite { rw, .. } => {
                if let Err(e) = rw.end() {
                    self.shared.lock().report.changes.push(Change::BailedOut {
                        reason: e.to_string(),
                    });
                }
            }
            Stage::Raw { .. } | Stage::Sniff(_) | Stage::Finished => {}
        }
        let out = self.take();
        let report = self.report();
        Ok((out, report))
    }

    /// Snapshot of what was done so far.
    pub fn report(&self) -> Report {
        self.shared.lock().report.clone()
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut *self.out.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn start(&mut self, head: &[u8]) -> Result<(), crate::error::Error> {
        let det: DetectedEncoding = if self.cfg.fragment {
            // Fragments come from JavaScript strings, sent as UTF-8.
            encoding::detect_encoding(&[], Some("text/html; charset=utf-8"))
        } else {
            encoding::detect_encoding(head, self.cfg.content_type.as_deref())
        };
        let enc = det.encoding;
        let runtime_tag = self.runtime_tag();
        {
            let mut st = self.shared.lock();
            st.report.encoding = enc.name().to_string();
            st.runtime_nonce = self.runtime_nonce;
            st.certain = det.is_certain();
        }
        if enc == REPLACEMENT {
            self.shared
                .lock()
                .report
                .changes
                .push(Change::PassedThrough {
                    reason: format!(
                        "encoding {} cannot be decoded (browsers show U+FFFD)",
                        enc.name()
                    ),
                });
            self.stage = Stage::Raw { decoder: None };
            return self.feed(head, false);
        }
        let (lol_enc, decoder) = if encoding::needs_transcoding(enc) {
            self.out
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(b"\xEF\xBB\xBF");
            self.shared.lock().report.changes.push(Change::Transcoded {
                from: enc.name().to_string(),
            });
            self.output_content_type = self
                .cfg
                .content_type
                .as_deref()
                .map(encoding::adjust_content_type);
            self.shared.lock().report.content_type = self.output_content_type.clone();
            (
                AsciiCompatibleEncoding::utf_8(),
                Some(enc.new_decoder_with_bom_removal()),
            )
        } else {
            match AsciiCompatibleEncoding::new(enc) {
                Some(a) => (a, None),
                None => (AsciiCompatibleEncoding::utf_8(), None),
            }
        };
        self.shared.lock().ascii_only = decoder.is_none() && enc != UTF_8;
        let rw = build_rewriter(
            self.shared.clone(),
            self.out.clone(),
            lol_enc,
            self.cfg.max_memory,
            self.cfg.mode,
        );
        let mut inj = Injector::new(runtime_tag.into_bytes());
        if self.cfg.fragment {
            inj.prolog = None;
        }
        self.stage = Stage::Rewrite {
            rw: Box::new(rw),
            decoder,
            inj,
        };
        self.feed(head, false)
    }

    fn feed(&mut self, chunk: &[u8], last: bool) -> Result<(), crate::error::Error> {
        let mut bail = None;
        match &mut self.stage {
            Stage::Rewrite { rw, decoder, inj } => {
                let was_done = inj.done();
                let res = match decoder {
                    Some(d) => {
                        let text = decode_chunk(d, chunk, last);
                        rw.write(&inj.splice(text.as_bytes(), last))
                    }
                    None => rw.write(&inj.splice(chunk, last)),
                };
                if inj.done() && !was_done {
                    self.shared.lock().report.injected = true;
                }
                if let Err(e) = res {
                    // Graceful bail-out already flushed the unconsumed input as-is.
                    bail = Some((e.to_string(), decoder.take()));
                }
            }
            Stage::Raw { decoder } => {
                let bytes = match decoder {
                    Some(d) => decode_chunk(d, chunk, last).into_bytes(),
                    None => chunk.to_vec(),
                };
                self.out
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(&bytes);
            }
            Stage::Sniff(_) | Stage::Finished => {}
        }
        if let Some((reason, decoder)) = bail {
            tracing::warn!(%reason, "HTML rewriter bailed out; passing the rest through");
            self.shared
                .lock()
                .report
                .changes
                .push(Change::BailedOut { reason });
            self.stage = Stage::Raw { decoder };
        }
        Ok(())
    }
}

/// Splices the runtime tag into the stream where [`Prolog`] says, holding back only the bytes
/// of a start tag whose name is still undecided.
struct Injector {
    prolog: Option<Prolog>,
    held: Vec<u8>,
    held_start: u64,
    tag: Vec<u8>,
}

impl Injector {
    fn new(tag: Vec<u8>) -> Self {
        Injector {
            prolog: Some(Prolog::new()),
            held: Vec::new(),
            held_start: 0,
            tag,
        }
    }

    fn done(&self) -> bool {
        self.prolog.is_none()
    }

    fn splice<'a>(&mut self, input: &'a [u8], last: bool) -> Cow<'a, [u8]> {
        let Some(p) = self.prolog.as_mut() else {
            return Cow::Borrowed(input);
        };
        let scan = p.scan(input);
        self.held.extend_from_slice(input);
        let at = match scan {
            Scan::InjectAt(at) => at,
            // Nothing to inject before: append at the end.
            Scan::Pending { .. } if last => self.held_start + self.held.len() as u64,
            Scan::Pending { hold_from } => {
                let n = usize::try_from(hold_from - self.held_start)
                    .unwrap_or(0)
                    .min(self.held.len());
                self.held_start += n as u64;
                return Cow::Owned(self.held.drain(..n).collect());
            }
        };
        let at = usize::try_from(at - self.held_start)
            .unwrap_or(0)
            .min(self.held.len());
        let mut out = Vec::with_capacity(self.held.len() + self.tag.len());
        out.extend_from_slice(&self.held[..at]);
        out.extend_from_slice(&self.tag);
        out.extend_from_slice(&self.held[at..]);
        self.prolog = None;
        self.held = Vec::new();
        Cow::Owned(out)
    }
}

fn private_cache(mode: Mode) -> ScriptCache {
    match ScriptCache::new(mode, 4 * 1024 * 1024, None) {
        Ok(c) => c,
        // Without a directory `new` does no i/o and cannot fail.
        Err(_) => unreachable_cache(mode),
    }
}

#[cold]
fn unreachable_cache(mode: Mode) -> ScriptCache {
    // A zero-sized memory budget is always constructible.
    match ScriptCache::new(mode, 0, None) {
        Ok(c) => c,
        Err(e) => panic!("in-memory cache construction failed: {e}"),
    }
}

fn decode_chunk(d: &mut Decoder, chunk: &[u8], last: bool) -> String {
    let cap = d
        .max_utf8_buffer_length(chunk.len())
        .unwrap_or(chunk.len() * 3 + 16);
    let mut s = String::with_capacity(cap);
    let _ = d.decode_to_string(chunk, &mut s, last);
    s
}

/// Percent-encodes a query component (the credential is ours, but be safe).
fn url_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn build_rewriter(
    shared: Shared,
    out: Arc<Mutex<Vec<u8>>>,
    enc: AsciiCompatibleEncoding,
    max_memory: usize,
    mode: Mode,
) -> HtmlRewriter<'static, Sink> {
    let s_el = shared.clone();
    let s_end = shared.clone();
    let gated = shared.lock().gates.is_some();
    let mut settings = Settings::new_send()
        .with_encoding(enc)
        // Ambiguous markup (`<select><xmp><script>`) is rare; bailing out would lose the rest
        // of the page, guessing at worst leaves one script uninstrumented.
        .with_strict(false)
        .with_memory_settings(
            MemorySettings::new()
                .with_max_allowed_memory_usage(max_memory)
                .with_graceful_bail_out_on_memory_limit_exceeded(true),
        )
        // Repair mode needs only srcdoc documents (and, with parser gates, scripts, images and
        // templates): `*` would make lol_html lex every tag.
        .append_element_content_handler(element!(
            if mode.rewrites_js() {
                "*"
            } else if gated {
                "iframe[srcdoc], script, img, template"
            } else {
                "iframe[srcdoc]"
            },
            move |el: &mut Element<'_, '_>| {
                on_element(&s_el, el);
                Ok(())
            }
        ))
        .append_document_content_handler(end!(move |end: &mut DocumentEnd<'_>| {
            let mut st = s_end.lock();
            if let Some(p) = st.script.take() {
                // A foreign-content script cut off by the end of the document.
                end.append(&p.text, ContentType::Html);
            }
            Ok(())
        }));
    if mode.rewrites_js() {
        let s_text = shared.clone();
        settings =
            settings.append_element_content_handler(text!("script", move |t: &mut TextChunk<
                '_,
            >| {
                on_script_text(&s_text, t);
                Ok(())
            }));
    }
    HtmlRewriter::new(settings, Sink(out))
}

fn on_element(shared: &Shared, el: &mut Element<'_, '_>) {
    let name = el.tag_name();
    let mut st = shared.lock();
    if let Some(g) = st.gates.as_mut() {
        match name.as_str() {
            "script" => g.script(el),
            "img" => g.image(el),
            "template" => {
                g.in_template += 1;
                let shared_end = shared.clone();
                let ended = el.on_end_tag(Box::new(move |_: &mut EndTag<'_>| {
                    if let Some(g) = shared_end.lock().gates.as_mut() {
                        g.in_template = g.in_template.saturating_sub(1);
                    }
                    Ok(())
                }));
                if ended.is_err() {
                    g.in_template = g.in_template.saturating_sub(1);
                }
            }
            _ => {}
        }
    }
    match name.as_str() {
        "meta" => {
            if let Some(h) = el.get_attribute("http-equiv")
                && h.trim().eq_ignore_ascii_case("content-security-policy")
                && let Some(c) = el.get_attribute("content")
                && let Ok(c) = entities::decode_attr(&c)
            {
                st.policies.add(&c);
            }
        }
        "script" if st.mode.rewrites_js() => on_script_start(shared, &mut st, el),
        "iframe" if !st.fragment => {
            if let Some(raw) = el.get_attribute("srcdoc") {
                on_srcdoc(&mut st, el, &raw);
            }
        }
        "link" if st.mode.rewrites_js() => {
            let rel = el
                .get_attribute("rel")
                .unwrap_or_default()
                .to_ascii_lowercase();
            let as_script = el
                .get_attribute("as")
                .is_some_and(|a| a.trim().eq_ignore_ascii_case("script"));
            if rel
                .split_ascii_whitespace()
                .any(|r| r == "modulepreload" || (r == "preload" && as_script))
            {
                remove_integrity(&mut st, el, "link");
            }
        }
        _ => {}
    }
    if st.mode.rewrites_js() {
        rewrite_attributes(&mut st, el);
    }
}

/// An `<iframe srcdoc>` is a document of its own: it gets the runtime (and, in record mode,
/// instrumented code) like any other, under the parent's policies (srcdoc documents inherit
/// them).
fn on_srcdoc(st: &mut State, el: &mut Element<'_, '_>, raw: &str) {
    if st.depth >= MAX_SRCDOC_DEPTH {
        return;
    }
    let Ok(html) = entities::decode_attr(raw) else {
        st.report.counters.kept_unknown_entity += 1;
        return;
    };
    let mut h = HtmlInstrumenter::new(st.nested.clone());
    h.runtime_nonce = st.runtime_nonce;
    {
        let mut n = h.shared.lock();
        n.policies = st.policies.clone();
        n.depth = st.depth + 1;
    }
    let Ok(mut out) = h.write(html.as_bytes()) else {
        return;
    };
    let Ok((tail, report)) = h.finish() else {
        return;
    };
    out.extend(tail);
    st.report.counters.add(&report.counters);
    st.report.changes.extend(report.changes);
    if let Ok(out) = String::from_utf8(out)
        && el
            .set_attribute("srcdoc", &entities::encode_attr_amp(&out))
            .is_ok()
    {
        st.report.srcdoc_documents += 1;
    }
}

/// Record mode: the proxy rewrites external script bodies, so their SRI hashes cannot match.
fn remove_integrity(st: &mut State, el: &mut Element<'_, '_>, element: &str) {
    if let Some(v) = el.get_attribute("integrity") {
        el.remove_attribute("integrity");
        st.report.counters.integrity_removed += 1;
        st.report.changes.push(Change::IntegrityRemoved {
            element: element.to_string(),
            value: v,
        });
    }
}

fn on_script_start(shared: &Shared, st: &mut State, el: &mut Element<'_, '_>) {
    st.script = None;
    let decoded = |n: &str| {
        el.get_attribute(n)
            .map(|v| entities::decode_attr(&v).unwrap_or(v))
    };
    let kind = script_kind(decoded("type").as_deref(), decoded("language").as_deref());
    if el.has_attribute("src") {
        if kind.is_some() {
            remove_integrity(st, el, "script");
        }
        return;
    }
    let Some(kind) = kind else {
        st.report.counters.scripts_not_js += 1;
        return;
    };
    let nonce = decoded("nonce");
    match st.policies.verdict(csp::ELEM, nonce.as_deref()) {
        InlineVerdict::Rewritable => {}
        InlineVerdict::HashBound | InlineVerdict::Blocked => {
            st.report.counters.kept_for_csp += 1;
            return;
        }
    }
    if !el.can_have_content() {
        // `<svg><script/>`: no text to instrument.
        return;
    }
    let data = el.namespace_uri() != "http://www.w3.org/1999/xhtml";
    st.script = Some(PendingScript {
        kind,
        text: String::new(),
        data,
        segments: Vec::new(),
        unexpected: false,
    });
    if data || st.fragment {
        // Foreign-content scripts may be split by comments into several text nodes: collect
        // them all and emit the result before the end tag. In a fragment the end tag may be
        // missing (a script written in pieces): then the document end puts back the original.
        let shared_end = shared.clone();
        let _ = el.on_end_tag(Box::new(move |end: &mut EndTag<'_>| {
            let mut st = shared_end.lock();
            if let Some(p) = st.script.take() {
                let out = finish_script(&mut st, p);
                end.before(&out, ContentType::Html);
            }
            Ok(())
        }));
    }
}

fn on_script_text(shared: &Shared, t: &mut TextChunk<'_>) {
    let mut st = shared.lock();
    let Some(p) = st.script.as_mut() else { return };
    let ty = t.text_type();
    p.text.push_str(t.as_str());
    let data = p.data;
    // lol_html's text mode disagreeing with the namespace: do not guess, keep the text.
    p.unexpected |= !data && ty != TextType::ScriptData;
    if data {
        let entities = ty != TextType::CDataSection;
        match p.segments.last_mut() {
            Some((e, s)) if *e == entities => s.push_str(t.as_str()),
            _ => p.segments.push((entities, t.as_str().to_string())),
        }
    }
    t.remove();
    if data || st.fragment || !t.last_in_text_node() {
        return;
    }
    if let Some(p) = st.script.take() {
        let out = finish_script(&mut st, p);
        t.replace(&out, ContentType::Html);
    }
}

/// The markup replacing a collected inline script: instrumented, or the original text.
fn finish_script(st: &mut State, p: PendingScript) -> String {
    let source = if p.data {
        let mut source = String::with_capacity(p.text.len());
        for (entities, seg) in &p.segments {
            if !entities {
                source.push_str(seg);
                continue;
            }
            match entities::decode_text(seg) {
                Ok(s) => source.push_str(&s),
                Err(_) => {
                    st.report.counters.kept_unknown_entity += 1;
                    return raw_data(&p);
                }
            }
        }
        source
    } else if p.unexpected {
        return p.text;
    } else {
        p.text.clone()
    };
    if source.trim().is_empty() {
        return if p.data { raw_data(&p) } else { p.text };
    }
    if !st.certain && !source.is_ascii() {
        st.report.counters.kept_uncertain_encoding += 1;
        return p.text;
    }
    let flags = Flags {
        ascii_only: st.ascii_only,
        inline_script: true,
        source_map: false,
    };
    let out = st.cache.instrument_inline(&source, p.kind, flags);
    if out.from_cache {
        st.report.counters.cache_hits += 1;
    }
    match out.code {
        Some(code) => {
            st.report.counters.scripts_instrumented += 1;
            if p.data {
                entities::encode_text(&code)
            } else {
                code.to_string()
            }
        }
        None => {
            st.report.counters.scripts_kept_js_error += 1;
            if p.data { raw_data(&p) } else { p.text }
        }
    }
}

/// Original foreign-content text to re-emit. CDATA sections reach handlers without their
/// markers (lol_html emits those separately), so their text is escaped as character data,
/// which denotes the same script source.
fn raw_data(p: &PendingScript) -> String {
    let mut out = String::with_capacity(p.text.len());
    for (entities, seg) in &p.segments {
        if *entities {
            out.push_str(seg);
        } else {
            out.push_str(&entities::encode_text(seg));
        }
    }
    out
}

fn rewrite_attributes(st: &mut State, el: &mut Element<'_, '_>) {
    let mut edits: Vec<(String, String)> = Vec::new();
    for a in el.attributes() {
        let name = a.name();
        if is_event_handler(&name) {
            edits.push((name, a.value()));
        } else if is_navigation_url_attr(&name) {
            let v = a.value();
            if v.len() >= 11 && v.to_ascii_lowercase().contains("script") {
                edits.push((name, v));
            }
        }
    }
    if edits.is_empty() {
        return;
    }
    let handler_verdict = st.policies.verdict(csp::ATTR, None);
    let url_verdict = st.policies.verdict(csp::ELEM, None);
    for (name, raw) in edits {
        let handler = is_event_handler(&name);
        if raw.trim().is_empty() {
            continue;
        }
        let Ok(value) = entities::decode_attr(&raw) else {
            st.report.counters.kept_unknown_entity += 1;
            continue;
        };
        let (kind, source) = if handler {
            (ScriptKind::Handler, value)
        } else {
            match js_url_body(&value) {
                Some(body) => (ScriptKind::JsUrl, body),
                None => continue,
            }
        };
        let verdict = if handler {
            handler_verdict
        } else {
            url_verdict
        };
        if verdict != InlineVerdict::Rewritable {
            st.report.counters.kept_for_csp += 1;
            continue;
        }
        if !st.certain && !source.is_ascii() {
            st.report.counters.kept_uncertain_encoding += 1;
            continue;
        }
        let flags = Flags {
            ascii_only: st.ascii_only,
            inline_script: false,
            source_map: false,
        };
        let out = st.cache.instrument_inline(&source, kind, flags);
        if out.from_cache {
            st.report.counters.cache_hits += 1;
        }
        let Some(code) = out.code else {
            if handler {
                st.report.counters.handlers_kept_js_error += 1;
            } else {
                st.report.counters.js_urls_kept_js_error += 1;
            }
            continue;
        };
        let new = if handler {
            code.to_string()
        } else {
            js_url_encode(&code)
        };
        if el
            .set_attribute(&name, &entities::encode_attr_amp(&new))
            .is_ok()
        {
            if handler {
                st.report.counters.handlers_instrumented += 1;
            } else {
                st.report.counters.js_urls_instrumented += 1;
            }
        }
    }
}

/// Instruments a whole document in one call (tests, the CLI).
pub fn instrument_html(
    input: &[u8],
    cfg: HtmlConfig,
    csp_headers: &[(CspHeader, &str)],
) -> Result<(Vec<u8>, Report, Vec<String>), crate::error::Error> {
    let mut inst = HtmlInstrumenter::new(cfg);
    let headers = csp_headers
        .iter()
        .map(|(h, v)| inst.adjust_csp_header(v, *h))
        .collect();
    let mut out = inst.write(input)?;
    let (tail, report) = inst.finish()?;
    out.extend_from_slice(&tail);
    Ok((out, report, headers))
}

#[cfg(test)]
mod sniff_tests {
    use super::*;

    /// A small document that declares its charset in a `<meta>` is rewritten as its parts
    /// arrive, not held until 1024 bytes or its end: the explorer releases a page in parts.
    #[test]
    fn a_meta_charset_ends_the_sniffing_early() {
        let mut doc = HtmlInstrumenter::new(HtmlConfig {
            content_type: Some("text/html".into()),
            ..HtmlConfig::new(Mode::Record, "t")
        });
        let first = doc
            .write(b"<!doctype html><html><head><meta charset=\"utf-8\"><title>a</title></head><body><p>x</p>")
            .unwrap();
        assert!(
            String::from_utf8_lossy(&first).contains("<p>x"),
            "{}",
            String::from_utf8_lossy(&first)
        );
        // Without a declaration the prescan still waits for more.
        let mut undeclared = HtmlInstrumenter::new(HtmlConfig {
            content_type: Some("text/html".into()),
            ..HtmlConfig::new(Mode::Record, "t")
        });
        assert!(
            undeclared
                .write(b"<html><body><p>x</p>")
                .unwrap()
                .is_empty()
        );
        // A declaration cut off mid-tag decides nothing yet.
        let mut cut = HtmlInstrumenter::new(HtmlConfig {
            content_type: Some("text/html".into()),
            ..HtmlConfig::new(Mode::Record, "t")
        });
        assert!(
            cut.write(b"<html><head><meta charset=\"utf-")
                .unwrap()
                .is_empty()
        );
        let rest = cut.write(b"16le\"><body>").unwrap();
        assert!(!rest.is_empty());
    }
}
