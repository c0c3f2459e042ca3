//! HAR 1.2 export and import, so recordings move to and from browser devtools and other proxies.
//!
//! Mapping (see `docs/recording-format.md`): HAR `content.text` is the *decoded* body, so export
//! decodes `Content-Encoding` and additionally writes the bytes as stored (still encoded) in the
//! custom field `content._shepherdRaw` (base64) when they differ; import prefers that field, which
//! makes shepherd → HAR → shepherd byte-exact. A HAR from elsewhere (Chrome) carries decoded text
//! only: import stores it as an identity body and drops `Content-Encoding` (and fixes
//! `Content-Length`) so the stored response stays self-consistent. Binary bodies are base64
//! (`content.encoding = "base64"`; request bodies use `postData._encoding`, HAR has no field).

use crate::codec;
use crate::error::{Error, Result};
use crate::isotime;
use crate::model::*;
use crate::store::Recording;
use crate::websocket::{WsKind, WsMessage};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Map, Value, json};

/// Bodies larger than this are exported without text (HAR holds bodies in memory).
pub const EXPORT_BODY_MAX: u64 = 256 * 1024 * 1024;

/// Writes `session` (or every session) of `rec` as a HAR 1.2 document, one entry in memory at a
/// time.
pub fn export(
    rec: &Recording,
    session: Option<SessionId>,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    export_with_progress(rec, session, out, &mut |_, _| {})
}

/// [`export`], reporting `(entries written, entries in all)` to `progress`.
pub fn export_with_progress(
    rec: &Recording,
    session: Option<SessionId>,
    out: &mut dyn std::io::Write,
    progress: Progress<'_>,
) -> Result<()> {
    let exchanges = rec.exchanges(session)?;
    let total = exchanges.len() as u64;
    out.write_all(b"{\"log\":{\"version\":\"1.2\",\"creator\":")?;
    serde_json::to_writer(
        &mut *out,
        &json!({"name": "shepherd", "version": env!("CARGO_PKG_VERSION")}),
    )?;
    out.write_all(b",\"pages\":[],\"entries\":[\n")?;
    for (i, ex) in exchanges.iter().enumerate() {
        if i > 0 {
            out.write_all(b",\n")?;
        }
        serde_json::to_writer(&mut *out, &entry_json(rec, ex)?)?;
        progress(i as u64 + 1, total);
    }
    out.write_all(b"\n]}}\n")?;
    out.flush()?;
    Ok(())
}

fn headers_json(headers: &[Header]) -> Value {
    Value::Array(
        headers
            .iter()
            .map(|h| json!({"name": h.name, "value": h.value_str()}))
            .collect(),
    )
}

fn ms(us: Option<i64>) -> Value {
    match us {
        Some(us) => json!(us as f64 / 1000.0),
        None => json!(-1),
    }
}

fn mime_of(headers: &[Header]) -> String {
    header_value(headers, "content-type")
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default()
}

/// Text when the bytes are UTF-8, else base64 with the encoding marker.
fn text_fields(bytes: &[u8], obj: &mut Map<String, Value>, marker: &str) {
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            obj.insert("text".into(), json!(s));
        }
        Err(_) => {
            obj.insert("text".into(), json!(B64.encode(bytes)));
            obj.insert(marker.into(), json!("base64"));
        }
    }
}

fn cookies_from_request(headers: &[Header]) -> Value {
    let mut out = Vec::new();
    for h in headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("cookie"))
    {
        for pair in h.value_str().split(';') {
            if let Some((n, v)) = pair.trim().split_once('=') {
                out.push(json!({"name": n, "value": v}));
            }
        }
    }
    Value::Array(out)
}

fn cookies_from_response(headers: &[Header]) -> Value {
    let mut out = Vec::new();
    for h in headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
    {
        let v = h.value_str();
        if let Some((n, v)) = v.split(';').next().and_then(|p| p.trim().split_once('=')) {
            out.push(json!({"name": n, "value": v}));
        }
    }
    Value::Array(out)
}

fn entry_json(rec: &Recording, ex: &Exchange) -> Result<Value> {
    let t = &ex.timings;
    let total_us: i64 = [t.blocked_us, t.dns_us, t.connect_us]
        .iter()
        .flatten()
        .chain([t.send_us, t.wait_us, t.receive_us].iter())
        .filter(|v| **v > 0)
        .sum();
    let query: Vec<Value> = url::Url::parse(&ex.request.url)
        .map(|u| {
            u.query_pairs()
                .map(|(k, v)| json!({"name": k, "value": v}))
                .collect()
        })
        .unwrap_or_default();
    let mut request = json!({
        "method": ex.request.method,
        "url": ex.request.url,
        "httpVersion": ex.request.http_version,
        "cookies": cookies_from_request(&ex.request.headers),
        "headers": headers_json(&ex.request.headers),
        "queryString": query,
        "headersSize": -1,
        "bodySize": ex.request_body.len,
    });
    if ex.request_body.len > 0 && ex.request_body.len <= EXPORT_BODY_MAX {
        let body = rec.body_bytes(ex.id, Part::Request, EXPORT_BODY_MAX)?;
        let mut post = Map::new();
        post.insert("mimeType".into(), json!(mime_of(&ex.request.headers)));
        text_fields(&body, &mut post, "_encoding");
        request["postData"] = Value::Object(post);
    }
    let response = match &ex.response {
        Some(resp) => {
            let mut content = Map::new();
            content.insert("mimeType".into(), json!(mime_of(&resp.headers)));
            let mut decoded_len = ex.response_body.len;
            if ex.response_body.len <= EXPORT_BODY_MAX {
                let raw = rec.body_bytes(ex.id, Part::Response, EXPORT_BODY_MAX)?;
                let encoding = header_value(&resp.headers, "content-encoding")
                    .map(|v| String::from_utf8_lossy(v).into_owned())
                    .unwrap_or_default();
                let decoded = if encoding.trim().is_empty() {
                    None
                } else {
                    codec::decode(&encoding, &raw, EXPORT_BODY_MAX)
                };
                match decoded {
                    Some(d) => {
                        decoded_len = d.len() as u64;
                        text_fields(&d, &mut content, "encoding");
                        content.insert("_shepherdRaw".into(), json!(B64.encode(&raw)));
                    }
                    None => {
                        if !encoding.trim().is_empty() {
                            // Undecodable: give the raw bytes so nothing is lost.
                            content.insert("text".into(), json!(B64.encode(&raw)));
                            content.insert("encoding".into(), json!("base64"));
                            content.insert("_shepherdRaw".into(), json!(B64.encode(&raw)));
                        } else {
                            text_fields(&raw, &mut content, "encoding");
                        }
                    }
                }
            } else {
                content.insert(
                    "comment".into(),
                    json!(format!("body of {} bytes omitted", ex.response_body.len)),
                );
            }
            content.insert("size".into(), json!(decoded_len));
            content.insert(
                "compression".into(),
                json!(decoded_len as i64 - ex.response_body.len as i64),
            );
            json!({
                "status": resp.status,
                "statusText": resp.reason,
                "httpVersion": resp.http_version,
                "cookies": cookies_from_response(&resp.headers),
                "headers": headers_json(&resp.headers),
                "content": Value::Object(content),
                "redirectURL": header_value(&resp.headers, "location")
                    .map(|v| String::from_utf8_lossy(v).into_owned())
                    .unwrap_or_default(),
                "headersSize": -1,
                "bodySize": ex.response_body.len,
            })
        }
        None => json!({
            "status": 0,
            "statusText": "",
            "httpVersion": "",
            "cookies": [],
            "headers": [],
            "content": {"size": 0, "mimeType": ""},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
            "_error": ex.error.clone().unwrap_or_default(),
        }),
    };
    let mut entry = json!({
        "startedDateTime": isotime::format_us(t.started_unix_us),
        "time": total_us as f64 / 1000.0,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {
            "blocked": ms(t.blocked_us),
            "dns": ms(t.dns_us),
            "connect": ms(t.connect_us),
            "ssl": ms(t.ssl_us),
            "send": ms(Some(t.send_us)),
            "wait": ms(Some(t.wait_us)),
            "receive": ms(Some(t.receive_us)),
        },
        "_shepherd": {
            "id": ex.id.0,
            "session": ex.session.0,
            "websocket": ex.websocket,
            "error": ex.error,
        },
    });
    if ex.websocket {
        entry["_resourceType"] = json!("websocket");
        let base = ws_base_us(t);
        let messages: Vec<Value> = rec
            .ws_messages(ex.id)?
            .iter()
            .map(|m| ws_message_json(m, base))
            .collect();
        entry["_webSocketMessages"] = Value::Array(messages);
    }
    Ok(entry)
}

/// When the upgrade completed (what `WsMessage::at_us` counts from), in µs since the epoch.
fn ws_base_us(t: &Timings) -> i64 {
    t.started_unix_us
        .saturating_add(t.send_us.max(0))
        .saturating_add(t.wait_us.max(0))
}

/// Chrome's `_webSocketMessages` item: `type` send/receive, `time` in epoch seconds, `opcode`,
/// `data` (text, or base64 for binary and close payloads); `_atUs` keeps the exact offset.
fn ws_message_json(m: &WsMessage, base_us: i64) -> Value {
    let data = match m.kind {
        WsKind::Text => json!(String::from_utf8_lossy(&m.data)),
        _ => json!(B64.encode(&m.data)),
    };
    json!({
        "type": if m.from_client { "send" } else { "receive" },
        "time": base_us.saturating_add(m.at_us) as f64 / 1e6,
        "opcode": m.kind.opcode(),
        "data": data,
        "_atUs": m.at_us,
    })
}

fn parse_ws_messages(e: &Value, base_us: i64) -> std::result::Result<Vec<WsMessage>, String> {
    let Some(list) = e.get("_webSocketMessages") else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .ok_or("_webSocketMessages is not an array")?;
    let mut out = Vec::new();
    for m in list {
        let from_client = match str_field(m, "type") {
            Some("send") => true,
            Some("receive") => false,
            other => return Err(format!("WebSocket message type {other:?}")),
        };
        let opcode = m.get("opcode").and_then(Value::as_u64).unwrap_or(1);
        let Some(kind) = u8::try_from(opcode).ok().and_then(WsKind::from_opcode) else {
            continue;
        };
        let text = str_field(m, "data").unwrap_or("");
        let data = match kind {
            WsKind::Text => text.as_bytes().to_vec(),
            _ => B64
                .decode(text.trim())
                .map_err(|e| format!("WebSocket message data: {e}"))?,
        };
        let at_us = match m.get("_atUs").and_then(Value::as_i64) {
            Some(us) => us,
            None => m
                .get("time")
                .and_then(Value::as_f64)
                .map_or(0, |secs| ((secs * 1e6).round() as i64 - base_us).max(0)),
        };
        out.push(WsMessage {
            from_client,
            kind,
            at_us,
            data,
        });
    }
    Ok(out)
}

/// Imports a HAR document into `rec` as a new session labelled `label`; returns the session and
/// the number of entries imported. Nothing is written when the document is malformed.
pub fn import(
    rec: &Recording,
    input: &mut dyn std::io::Read,
    label: &str,
) -> Result<(SessionId, usize)> {
    import_with_progress(rec, input, label, &mut |_, _| {})
}

/// [`import`], reporting `(entries stored, entries in the document)` to `progress` once the
/// document is parsed (wrap `input` to follow the parse).
pub fn import_with_progress(
    rec: &Recording,
    input: &mut dyn std::io::Read,
    label: &str,
    progress: Progress<'_>,
) -> Result<(SessionId, usize)> {
    let doc: Value = serde_json::from_reader(input)?;
    let entries = doc
        .pointer("/log/entries")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::Format("not a HAR file: no log.entries array".into()))?;
    // Parse everything first so a bad entry leaves the recording untouched.
    let parsed: Vec<ImportedEntry> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| parse_entry(e).map_err(|m| Error::Format(format!("HAR entry {i}: {m}"))))
        .collect::<Result<_>>()?;
    let started = parsed
        .iter()
        .map(|e| e.timings.started_unix_us)
        .filter(|t| *t > 0)
        .min()
        .unwrap_or_else(now_unix_us);
    let session = rec.begin_session_at(label, started)?;
    let count = parsed.len();
    progress(0, count as u64);
    for (done, e) in parsed.into_iter().enumerate() {
        let mut w = rec.begin_exchange(session, e.request)?;
        w.request_body(&e.request_body)?;
        if let Some(r) = e.response {
            w.response_head(r);
        }
        w.response_body(&e.response_body)?;
        if e.websocket {
            w.set_websocket();
        }
        if let Some(err) = e.error {
            w.set_error(err);
        }
        let id = w.finish(e.timings)?;
        for (seq, m) in e.ws_messages.into_iter().enumerate() {
            rec.append_ws_message(id, seq as u64, m)?;
        }
        progress(done as u64 + 1, count as u64);
    }
    rec.flush()?;
    Ok((session, count))
}

struct ImportedEntry {
    request: RequestHead,
    request_body: Vec<u8>,
    response: Option<ResponseHead>,
    response_body: Vec<u8>,
    timings: Timings,
    websocket: bool,
    ws_messages: Vec<WsMessage>,
    error: Option<String>,
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn http_version(v: &str) -> String {
    match v.to_ascii_lowercase().as_str() {
        "h2" | "http/2" | "http/2.0" => "HTTP/2".into(),
        "h3" | "http/3" | "http/3.0" => "HTTP/3".into(),
        "http/1.1" => "HTTP/1.1".into(),
        "http/1.0" => "HTTP/1.0".into(),
        "" => "HTTP/1.1".into(),
        _ => v.to_owned(),
    }
}

fn parse_headers(v: Option<&Value>) -> Result<Vec<Header>, String> {
    let Some(list) = v else { return Ok(Vec::new()) };
    let list = list.as_array().ok_or("headers is not an array")?;
    let mut out = Vec::new();
    for h in list {
        let name = str_field(h, "name").ok_or("header without name")?;
        // HTTP/2 pseudo-headers (Chrome lists :authority, :path...) are not headers.
        if name.starts_with(':') {
            continue;
        }
        let value = str_field(h, "value").unwrap_or("");
        out.push(Header::new(name, value));
    }
    Ok(out)
}

fn decode_text(obj: &Value, marker: &str) -> Result<Vec<u8>, String> {
    let Some(text) = str_field(obj, "text") else {
        return Ok(Vec::new());
    };
    if str_field(obj, marker) == Some("base64") {
        B64.decode(text.trim())
            .map_err(|e| format!("bad base64 body: {e}"))
    } else {
        Ok(text.as_bytes().to_vec())
    }
}

fn timing_us(t: Option<&Value>, key: &str) -> Option<i64> {
    let v = t?.get(key)?.as_f64()?;
    if v < 0.0 {
        None
    } else {
        Some((v * 1000.0).round() as i64)
    }
}

fn parse_entry(e: &Value) -> Result<ImportedEntry, String> {
    let req = e.get("request").ok_or("missing request")?;
    let method = str_field(req, "method").ok_or("missing request.method")?;
    let url = str_field(req, "url").ok_or("missing request.url")?;
    let request = RequestHead {
        method: method.to_owned(),
        url: url.to_owned(),
        http_version: http_version(str_field(req, "httpVersion").unwrap_or("")),
        headers: parse_headers(req.get("headers"))?,
    };
    let request_body = match req.get("postData") {
        Some(post) if post.get("text").is_some() => decode_text(post, "_encoding")?,
        Some(post) => match post.get("params").and_then(Value::as_array) {
            Some(params) => {
                let mut ser = url::form_urlencoded::Serializer::new(String::new());
                for p in params {
                    ser.append_pair(
                        str_field(p, "name").unwrap_or(""),
                        str_field(p, "value").unwrap_or(""),
                    );
                }
                ser.finish().into_bytes()
            }
            None => Vec::new(),
        },
        None => Vec::new(),
    };
    let resp = e.get("response").ok_or("missing response")?;
    let status = resp.get("status").and_then(Value::as_i64).unwrap_or(0);
    let mut error = e
        .pointer("/_shepherd/error")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (response, response_body) = if status <= 0 {
        if error.is_none() {
            error = Some(
                str_field(resp, "_error")
                    .filter(|s| !s.is_empty())
                    .unwrap_or("no response in HAR")
                    .to_owned(),
            );
        }
        (None, Vec::new())
    } else {
        let status = u16::try_from(status).map_err(|_| format!("bad status {status}"))?;
        let mut headers = parse_headers(resp.get("headers"))?;
        let content = resp.get("content").cloned().unwrap_or(Value::Null);
        let body = match str_field(&content, "_shepherdRaw") {
            Some(raw) => B64
                .decode(raw.trim())
                .map_err(|e| format!("bad _shepherdRaw: {e}"))?,
            None => {
                let body = decode_text(&content, "encoding")?;
                // The text is decoded: the stored response must not claim an encoding.
                let had_encoding = headers
                    .iter()
                    .any(|h| h.name.eq_ignore_ascii_case("content-encoding"));
                if had_encoding {
                    headers.retain(|h| !h.name.eq_ignore_ascii_case("content-encoding"));
                    for h in headers.iter_mut() {
                        if h.name.eq_ignore_ascii_case("content-length") {
                            h.value = body.len().to_string().into_bytes();
                        }
                    }
                }
                body
            }
        };
        (
            Some(ResponseHead {
                status,
                reason: str_field(resp, "statusText").unwrap_or("").to_owned(),
                http_version: http_version(str_field(resp, "httpVersion").unwrap_or("")),
                headers,
            }),
            body,
        )
    };
    let t = e.get("timings");
    let started = str_field(e, "startedDateTime")
        .and_then(isotime::parse_us)
        .unwrap_or(0);
    let timings = Timings {
        started_unix_us: started,
        blocked_us: timing_us(t, "blocked"),
        dns_us: timing_us(t, "dns"),
        connect_us: timing_us(t, "connect"),
        ssl_us: timing_us(t, "ssl"),
        send_us: timing_us(t, "send").unwrap_or(0),
        wait_us: timing_us(t, "wait").unwrap_or(0),
        receive_us: timing_us(t, "receive").unwrap_or(0),
    };
    let websocket = e
        .pointer("/_shepherd/websocket")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || str_field(e, "_resourceType") == Some("websocket");
    let ws_messages = parse_ws_messages(e, ws_base_us(&timings))?;
    Ok(ImportedEntry {
        request,
        request_body,
        response,
        response_body,
        timings,
        websocket,
        ws_messages,
        error,
    })
}
