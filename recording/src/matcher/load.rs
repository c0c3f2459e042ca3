//! Building the matcher's input from a recording.

use super::lookup::RecordedRequest;
use crate::error::Result;
use crate::model::{Exchange, Part, header_value};
use crate::store::Recording;

/// JSON bodies up to this size are parsed for the response class.
const SHAPE_MAX: u64 = 1024 * 1024;

impl Recording {
    /// Every exchange that got a response, as matcher input. Request bodies above `max_body`
    /// bytes are left empty (their digest is still exact); WebSocket upgrades are skipped.
    pub fn replay_requests(&self, max_body: u64) -> Result<Vec<RecordedRequest>> {
        let mut out = Vec::new();
        for ex in self.exchanges(None)? {
            let Some(resp) = &ex.response else { continue };
            if ex.websocket {
                continue;
            }
            let body = if ex.request_body.len == 0 || ex.request_body.len > max_body {
                Vec::new()
            } else {
                self.body_bytes(ex.id, Part::Request, max_body)?
            };
            let class = self.response_class(&ex, resp)?;
            out.push(RecordedRequest {
                id: ex.id,
                session: ex.session,
                method: ex.request.method.clone(),
                url: ex.request.url.clone(),
                headers: ex.request.headers.clone(),
                body,
                body_sha256: ex.request_body.sha256,
                response_class: class,
            });
        }
        Ok(out)
    }

    fn response_class(&self, ex: &Exchange, resp: &crate::model::ResponseHead) -> Result<String> {
        let mime = header_value(&resp.headers, "content-type")
            .map(|v| {
                let s = String::from_utf8_lossy(v).to_ascii_lowercase();
                s.split(';').next().unwrap_or("").trim().to_owned()
            })
            .unwrap_or_default();
        let mut class = format!("{} {mime}", resp.status);
        if mime.contains("json") && ex.response_body.len <= SHAPE_MAX {
            let raw = self.body_bytes(ex.id, Part::Response, SHAPE_MAX)?;
            let coding = header_value(&resp.headers, "content-encoding")
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            if let Some(body) = crate::codec::decode(&coding, &raw, SHAPE_MAX)
                && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body)
            {
                class.push(' ');
                class.push_str(&json_shape(&v));
            }
        }
        Ok(class)
    }
}

/// AIL's type abstraction of a JSON value: primitives become their type, objects a record of
/// field types, arrays the union of their element types.
pub fn json_shape(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "num".into(),
        Value::String(_) => "str".into(),
        Value::Array(items) => {
            let mut kinds: Vec<String> = items.iter().map(json_shape).collect();
            kinds.sort();
            kinds.dedup();
            format!("[{}]", kinds.join("|"))
        }
        Value::Object(map) => {
            let mut fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}:{}", json_shape(v)))
                .collect();
            fields.sort();
            format!("{{{}}}", fields.join(","))
        }
    }
}
