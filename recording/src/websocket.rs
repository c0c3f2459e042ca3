//! WebSocket messages of upgraded exchanges: what each side sent, in order, with the time since
//! the upgrade, so replay can play the server's side back message by message.

use crate::error::{Error, Result};
use crate::model::ExchangeId;
use crate::store::{Cmd, Recording};
use serde::{Deserialize, Serialize};

/// What a message carries (the WebSocket opcode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WsKind {
    /// A text message (UTF-8 payload), opcode 1.
    Text,
    /// A binary message, opcode 2.
    Binary,
    /// A close frame, opcode 8: payload = 2-byte big-endian status code + UTF-8 reason (or
    /// empty).
    Close,
}

impl WsKind {
    /// The WebSocket opcode stored in the `opcode` column.
    pub fn opcode(self) -> u8 {
        match self {
            WsKind::Text => 1,
            WsKind::Binary => 2,
            WsKind::Close => 8,
        }
    }

    /// The kind of a stored opcode; `None` for opcodes that are never stored.
    pub fn from_opcode(op: u8) -> Option<WsKind> {
        match op {
            1 => Some(WsKind::Text),
            2 => Some(WsKind::Binary),
            8 => Some(WsKind::Close),
            _ => None,
        }
    }
}

/// One WebSocket message (fragments already joined, unmasked, uncompressed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WsMessage {
    /// Sent by the browser (true) or by the origin (false).
    pub from_client: bool,
    /// Text, binary or close.
    pub kind: WsKind,
    /// Microseconds from the upgrade (`101` passed on) to the message's last byte.
    pub at_us: i64,
    /// The payload.
    pub data: Vec<u8>,
}

impl Recording {
    /// Appends message `seq` (0, 1, ... in the order the proxy saw them, both directions
    /// together) of the WebSocket exchange `exchange`. Messages are committed as they come, like
    /// exchanges; a repeated `seq` is ignored.
    pub fn append_ws_message(&self, exchange: ExchangeId, seq: u64, msg: WsMessage) -> Result<()> {
        let seq = i64::try_from(seq).map_err(|_| Error::Format("message seq too large".into()))?;
        self.send(Cmd::WsMessage {
            exchange: exchange.0,
            seq,
            from_client: msg.from_client,
            opcode: msg.kind.opcode(),
            at_us: msg.at_us,
            data: msg.data,
        })
    }

    /// The messages of WebSocket exchange `exchange` in recorded order (empty for exchanges
    /// without messages, and for files older than schema version 3).
    pub fn ws_messages(&self, exchange: ExchangeId) -> Result<Vec<WsMessage>> {
        if self.version() < 3 {
            return Ok(Vec::new());
        }
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(
            "SELECT from_client, opcode, at_us, data FROM ws_messages
             WHERE exchange = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([exchange.0], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Vec<u8>>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (from_client, opcode, at_us, data) = row?;
            let Some(kind) = u8::try_from(opcode).ok().and_then(WsKind::from_opcode) else {
                continue;
            };
            out.push(WsMessage {
                from_client: from_client != 0,
                kind,
                at_us,
                data,
            });
        }
        Ok(out)
    }

    /// Ids of the WebSocket exchanges whose upgrade succeeded (`101`), in recording order.
    pub fn websocket_exchanges(&self) -> Result<Vec<ExchangeId>> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(
            "SELECT id FROM exchanges WHERE websocket = 1 AND status = 101 ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0))?;
        Ok(rows
            .map(|r| r.map(ExchangeId))
            .collect::<std::result::Result<_, _>>()?)
    }
}
