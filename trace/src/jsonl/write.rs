//! JSONL writer. Output is canonical: strings are defined in id order just before their first
//! use, arcs keep their order and come as soon as their head has begun, every action is ended.
//! Reading the output back gives an equal [`Trace`].

use crate::model::{
    ActionType, Arc, ArcKind, Control, FORMAT_VERSION, NodeDesc, Op, Pos, StrId, Trace,
};
use std::io::{self, Write};

/// Writes `trace` as JSONL (`docs/trace-format.md`) to `out`. Buffer `out` yourself if it is
/// a file; this function writes in chunks of about 64 KiB.
pub fn write_jsonl(trace: &Trace, mut out: impl Write) -> io::Result<()> {
    let mut w = Writer {
        buf: Vec::with_capacity(1 << 16),
        trace,
        defined: 0,
    };
    w.buf
        .extend_from_slice(b"{\"format\":\"shepherd-trace\",\"version\":");
    w.num(u64::from(FORMAT_VERSION));
    if let Some(page) = &trace.header.page {
        w.buf.extend_from_slice(b",\"page\":");
        w.json_str(page);
    }
    w.buf.extend_from_slice(b"}\n");

    let mut next_arc = 0;
    for action in &trace.actions {
        w.define(action.kind);
        w.define(action.stable);
        w.buf.extend_from_slice(b"[\"b\",");
        w.num(u64::from(action.id));
        w.buf.push(b',');
        w.num(type_code(action.ty));
        w.buf.push(b',');
        w.num(u64::from(action.kind));
        w.buf.push(b',');
        w.num(u64::from(action.stable));
        w.buf.extend_from_slice(b"]\n");
        while let Some(arc) = trace.arcs.get(next_arc).filter(|a| a.head <= action.id) {
            w.arc(arc);
            next_arc += 1;
        }
        for op in trace.ops_of(action.id) {
            w.op(op);
        }
        w.buf.extend_from_slice(b"[\"n\",");
        w.num(u64::from(action.id));
        w.buf.extend_from_slice(b"]\n");
        if w.buf.len() >= 1 << 16 {
            out.write_all(&w.buf)?;
            w.buf.clear();
        }
    }
    // Arcs to actions that do not exist break the model's invariants; they are written anyway
    // (the reader will name them) rather than dropped silently.
    for arc in trace.arcs.get(next_arc..).unwrap_or_default() {
        w.arc(arc);
    }
    // Node descriptions belong to no action: after the last one, in their order.
    for d in &trace.nodes {
        w.node(d);
    }
    // So do the controls a tool exercised.
    for c in &trace.controls {
        w.control(c);
    }
    // Interned but unused strings, so that the numbering survives a round trip.
    w.define(StrId::MAX);
    out.write_all(&w.buf)?;
    out.flush()
}

/// The JSONL trace of `trace` as a byte vector.
pub fn to_jsonl_bytes(trace: &Trace) -> Vec<u8> {
    let mut v = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_jsonl(trace, &mut v);
    v
}

fn type_code(ty: ActionType) -> u64 {
    ty as u8 as u64
}

struct Writer<'a> {
    buf: Vec<u8>,
    trace: &'a Trace,
    /// Strings `0..defined` have been written.
    defined: u32,
}

impl Writer<'_> {
    fn arc(&mut self, arc: &Arc) {
        self.buf.extend_from_slice(b"[\"a\",");
        self.num(u64::from(arc.tail));
        self.buf.push(b',');
        self.num(u64::from(arc.head));
        self.buf.extend_from_slice(match arc.kind {
            ArcKind::Fork => b",\"f\"",
            ArcKind::Join => b",\"j\"",
        });
        if let Some(d) = arc.delay_ms {
            self.buf.push(b',');
            self.num(u64::from(d));
        }
        self.buf.extend_from_slice(b"]\n");
    }

    fn op(&mut self, op: &Op) {
        match *op {
            Op::Read { loc, value, pos } => self.access(b"[\"r\",", loc, value.get(), pos),
            Op::Write { loc, value, pos } => self.access(b"[\"w\",", loc, value.get(), pos),
            Op::Enter { scope, src } => self.rec2(b"[\"e\",", scope, src),
            Op::Exception { message, src } => self.rec2(b"[\"!\",", message, src),
            Op::Exit => self.buf.extend_from_slice(b"[\"x\"]\n"),
        }
    }

    /// `[tag,L]`, `[tag,L,V]` or `[tag,L,V|null,P]`.
    fn access(&mut self, open: &[u8], loc: StrId, value: Option<StrId>, pos: Pos) {
        let Some(p) = pos.get() else {
            return self.rec2(open, loc, value);
        };
        self.define(loc);
        if let Some(v) = value {
            self.define(v);
        }
        self.define(p);
        self.buf.extend_from_slice(open);
        self.num(u64::from(loc));
        match value {
            Some(v) => {
                self.buf.push(b',');
                self.num(u64::from(v));
            }
            None => self.buf.extend_from_slice(b",null"),
        }
        self.buf.push(b',');
        self.num(u64::from(p));
        self.buf.extend_from_slice(b"]\n");
    }

    /// `["d",N,T,P,I,C]`, trailing `null`s left out.
    fn node(&mut self, d: &NodeDesc) {
        self.define(d.tag);
        let rest = [d.path, d.id, d.classes];
        let n = rest.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        for s in rest.iter().flatten() {
            self.define(*s);
        }
        self.buf.extend_from_slice(b"[\"d\",");
        self.num(u64::from(d.node));
        self.buf.push(b',');
        self.num(u64::from(d.tag));
        for s in &rest[..n] {
            match s {
                Some(s) => {
                    self.buf.push(b',');
                    self.num(u64::from(*s));
                }
                None => self.buf.extend_from_slice(b",null"),
            }
        }
        self.buf.extend_from_slice(b"]\n");
    }

    /// `["c",N,O,D]`.
    fn control(&mut self, c: &Control) {
        self.define(c.offered);
        self.define(c.done);
        self.buf.extend_from_slice(b"[\"c\",");
        self.num(u64::from(c.node));
        self.buf.push(b',');
        self.num(u64::from(c.offered));
        self.buf.push(b',');
        self.num(u64::from(c.done));
        self.buf.extend_from_slice(b"]\n");
    }

    fn rec2(&mut self, open: &[u8], a: StrId, b: Option<StrId>) {
        self.define(a);
        if let Some(b) = b {
            self.define(b);
        }
        self.buf.extend_from_slice(open);
        self.num(u64::from(a));
        if let Some(b) = b {
            self.buf.push(b',');
            self.num(u64::from(b));
        }
        self.buf.extend_from_slice(b"]\n");
    }

    /// Defines every string up to `id` not yet written, keeping file numbers equal to ids.
    fn define(&mut self, id: StrId) {
        while self.defined <= id && (self.defined as usize) < self.trace.strings.len() {
            let n = self.defined;
            self.buf.extend_from_slice(b"[\"s\",");
            self.num(u64::from(n));
            self.buf.push(b',');
            let text = self.trace.strings.get(n);
            self.json_str(text);
            self.buf.extend_from_slice(b"]\n");
            self.defined += 1;
        }
    }

    fn num(&mut self, mut v: u64) {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&tmp[i..]);
    }

    fn json_str(&mut self, s: &str) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.buf.push(b'"');
        let bytes = s.as_bytes();
        let mut run = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let esc: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0..=0x1f => b"",
                _ => continue,
            };
            self.buf.extend_from_slice(&bytes[run..i]);
            if esc.is_empty() {
                self.buf.extend_from_slice(b"\\u00");
                self.buf.push(HEX[(b >> 4) as usize]);
                self.buf.push(HEX[(b & 15) as usize]);
            } else {
                self.buf.extend_from_slice(esc);
            }
            run = i + 1;
        }
        self.buf.extend_from_slice(&bytes[run..]);
        self.buf.push(b'"');
    }
}
