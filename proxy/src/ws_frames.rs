//! A passive WebSocket frame reader (RFC 6455 §5) for recording: the proxy pipes the bytes of
//! an upgraded connection unchanged and feeds a copy of each direction here, which yields the
//! complete messages (fragments joined, client masking undone). It never writes anything, so a
//! stream it cannot follow is still tunnelled; it just stops yielding messages.

/// Messages larger than this are reported without their payload (not stored).
pub(crate) const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// One complete message seen on the wire.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// `1` text, `2` binary, `8` close.
    pub opcode: u8,
    /// The payload (empty when `oversize`).
    pub data: Vec<u8>,
    /// RSV1 was set on the first frame (`permessage-deflate`): `data` is still compressed.
    pub compressed: bool,
    /// The payload exceeded [`MAX_MESSAGE`] and was dropped.
    pub oversize: bool,
}

#[derive(Debug)]
enum State {
    /// Collecting the frame header (2 to 14 bytes).
    Header,
    /// Inside a frame's payload.
    Payload {
        remaining: u64,
        mask: Option<[u8; 4]>,
        /// Payload bytes of this frame seen so far (for the mask index).
        pos: usize,
        opcode: u8,
        fin: bool,
    },
}

/// Follows one direction of a WebSocket connection.
#[derive(Debug)]
pub(crate) struct FrameParser {
    state: State,
    head: Vec<u8>,
    /// The data message being assembled: opcode of its first frame, payload so far.
    message: Option<(u8, Vec<u8>)>,
    compressed: bool,
    oversize: bool,
    control: Vec<u8>,
    /// Set on a protocol violation: the parser stops (the tunnel goes on).
    broken: Option<&'static str>,
}

impl Default for FrameParser {
    fn default() -> Self {
        Self {
            state: State::Header,
            head: Vec::with_capacity(14),
            message: None,
            compressed: false,
            oversize: false,
            control: Vec::new(),
            broken: None,
        }
    }
}

/// Total header length once the first two bytes are known (2 before that).
fn header_len(head: &[u8]) -> usize {
    if head.len() < 2 {
        return 2;
    }
    let ext = match head[1] & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    let mask = if head[1] & 0x80 != 0 { 4 } else { 0 };
    2 + ext + mask
}

impl FrameParser {
    /// Why the parser gave up, if it did.
    pub fn broken(&self) -> Option<&'static str> {
        self.broken
    }

    /// Consumes the next bytes of the stream; complete messages are appended to `out`.
    pub fn push(&mut self, mut input: &[u8], out: &mut Vec<Parsed>) {
        while !input.is_empty() && self.broken.is_none() {
            match &mut self.state {
                State::Header => {
                    let need = header_len(&self.head);
                    let take = (need - self.head.len()).min(input.len());
                    self.head.extend_from_slice(&input[..take]);
                    input = &input[take..];
                    if self.head.len() == header_len(&self.head) {
                        self.start_frame(out);
                    }
                }
                State::Payload {
                    remaining,
                    mask,
                    pos,
                    opcode,
                    ..
                } => {
                    let take = usize::try_from(*remaining)
                        .unwrap_or(usize::MAX)
                        .min(input.len());
                    let chunk = &input[..take];
                    input = &input[take..];
                    *remaining -= take as u64;
                    let control = *opcode >= 8;
                    let keep = control || !self.oversize;
                    if keep {
                        let dst = if control {
                            &mut self.control
                        } else {
                            match self.message.as_mut() {
                                Some((_, data)) => data,
                                None => &mut self.control,
                            }
                        };
                        let start = dst.len();
                        dst.extend_from_slice(chunk);
                        if let Some(m) = mask {
                            for (i, b) in dst[start..].iter_mut().enumerate() {
                                *b ^= m[(*pos + i) % 4];
                            }
                        }
                    }
                    *pos += take;
                    if !control
                        && let Some((_, data)) = self.message.as_mut()
                        && data.len() > MAX_MESSAGE
                    {
                        self.oversize = true;
                        *data = Vec::new();
                    }
                    if *remaining == 0 {
                        self.end_frame(out);
                    }
                }
            }
        }
    }

    fn fail(&mut self, why: &'static str) {
        self.broken = Some(why);
    }

    /// The header is complete: check it and enter the payload.
    fn start_frame(&mut self, out: &mut Vec<Parsed>) {
        let h = std::mem::take(&mut self.head);
        let fin = h[0] & 0x80 != 0;
        let rsv1 = h[0] & 0x40 != 0;
        let opcode = h[0] & 0x0f;
        let len7 = h[1] & 0x7f;
        let (len, mut at) = match len7 {
            126 => (u64::from(u16::from_be_bytes([h[2], h[3]])), 4),
            127 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&h[2..10]);
                (u64::from_be_bytes(b), 10)
            }
            n => (u64::from(n), 2),
        };
        let mask = (h[1] & 0x80 != 0).then(|| {
            let m = [h[at], h[at + 1], h[at + 2], h[at + 3]];
            at += 4;
            m
        });
        debug_assert_eq!(at, h.len());
        match opcode {
            0 if self.message.is_none() => return self.fail("continuation without a message"),
            1 | 2 if self.message.is_some() => return self.fail("new message inside a message"),
            0..=2 => {}
            8..=10 if !fin || len > 125 => return self.fail("bad control frame"),
            8..=10 => self.control.clear(),
            _ => return self.fail("unknown opcode"),
        }
        if opcode == 1 || opcode == 2 {
            self.message = Some((opcode, Vec::new()));
            self.compressed = rsv1;
            self.oversize = false;
        }
        self.state = State::Payload {
            remaining: len,
            mask,
            pos: 0,
            opcode,
            fin,
        };
        if len == 0 {
            self.end_frame(out);
        }
    }

    fn end_frame(&mut self, out: &mut Vec<Parsed>) {
        let State::Payload { opcode, fin, .. } = self.state else {
            return;
        };
        self.state = State::Header;
        if opcode >= 8 {
            if opcode == 8 {
                out.push(Parsed {
                    opcode,
                    data: std::mem::take(&mut self.control),
                    compressed: false,
                    oversize: false,
                });
            }
            return;
        }
        if fin && let Some((first, data)) = self.message.take() {
            out.push(Parsed {
                opcode: first,
                data,
                compressed: self.compressed,
                oversize: self.oversize,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(fin: bool, opcode: u8, mask: Option<[u8; 4]>, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![(u8::from(fin) << 7) | opcode];
        let m = if mask.is_some() { 0x80 } else { 0 };
        match payload.len() {
            n if n < 126 => f.push(m | n as u8),
            n if n < 65536 => {
                f.push(m | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(m | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        match mask {
            Some(k) => {
                f.extend_from_slice(&k);
                f.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i % 4]));
            }
            None => f.extend_from_slice(payload),
        }
        f
    }

    fn parse_in_chunks(bytes: &[u8], chunk: usize) -> Vec<Parsed> {
        let mut p = FrameParser::default();
        let mut out = Vec::new();
        for c in bytes.chunks(chunk) {
            p.push(c, &mut out);
        }
        assert_eq!(p.broken(), None);
        out
    }

    #[test]
    fn masked_fragmented_and_control_frames_in_any_chunking() {
        let key = Some([1, 2, 3, 4]);
        let big: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        let mut wire = Vec::new();
        wire.extend(frame(true, 1, key, b"hello"));
        // A text message in two fragments with a ping between them.
        wire.extend(frame(false, 1, key, b"frag"));
        wire.extend(frame(true, 9, key, b"ping!"));
        wire.extend(frame(true, 0, key, b"mented"));
        wire.extend(frame(true, 2, None, &big));
        wire.extend(frame(true, 2, None, b""));
        wire.extend(frame(true, 8, key, &[3, 232, b'b', b'y', b'e']));
        for chunk in [1, 3, 7, 1000, wire.len()] {
            let got = parse_in_chunks(&wire, chunk);
            let summary: Vec<(u8, &[u8])> =
                got.iter().map(|p| (p.opcode, p.data.as_slice())).collect();
            assert_eq!(
                summary,
                vec![
                    (1, &b"hello"[..]),
                    (1, &b"fragmented"[..]),
                    (2, &big[..]),
                    (2, &b""[..]),
                    (8, &[3, 232, b'b', b'y', b'e'][..]),
                ],
                "chunk size {chunk}"
            );
        }
    }

    #[test]
    fn oversize_compressed_and_garbage() {
        let huge = vec![7u8; MAX_MESSAGE + 10];
        let mut wire = frame(true, 2, None, &huge);
        let mut compressed = frame(true, 1, None, b"\x00\x01");
        compressed[0] |= 0x40;
        wire.extend(compressed);
        let got = parse_in_chunks(&wire, 64 * 1024);
        assert_eq!(got.len(), 2);
        assert!(got[0].oversize && got[0].data.is_empty());
        assert!(got[1].compressed);

        let mut p = FrameParser::default();
        let mut out = Vec::new();
        p.push(&frame(true, 0, None, b"x"), &mut out);
        assert!(p.broken().is_some());
        p.push(&frame(true, 1, None, b"ignored after"), &mut out);
        assert!(out.is_empty());
    }
}
