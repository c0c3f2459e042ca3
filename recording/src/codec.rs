//! Decoding `Content-Encoding` for HAR export (HAR `content.text` holds the decoded body, while
//! the store keeps the bytes as they crossed the wire).

use std::io::Read;

/// Undoes `content_encoding` (a comma-separated list, applied in order, so decoded in reverse).
/// `None` when an encoding is unknown, the data is corrupt, or the result exceeds `limit` bytes.
pub(crate) fn decode(content_encoding: &str, data: &[u8], limit: u64) -> Option<Vec<u8>> {
    let mut current = data.to_vec();
    for enc in content_encoding.split(',').rev() {
        let enc = enc.trim().to_ascii_lowercase();
        current = match enc.as_str() {
            "" | "identity" => current,
            "gzip" | "x-gzip" => {
                read_limited(flate2::read::MultiGzDecoder::new(&current[..]), limit)?
            }
            "deflate" => {
                // Servers send zlib-wrapped or raw deflate under this name; try both.
                read_limited(flate2::read::ZlibDecoder::new(&current[..]), limit).or_else(|| {
                    read_limited(flate2::read::DeflateDecoder::new(&current[..]), limit)
                })?
            }
            "br" => read_limited(brotli::Decompressor::new(&current[..], 64 * 1024), limit)?,
            "zstd" => read_limited(zstd::stream::read::Decoder::new(&current[..]).ok()?, limit)?,
            _ => return None,
        };
    }
    Some(current)
}

impl crate::Recording {
    /// The response body of `id` with its `Content-Encoding` undone (gzip, deflate, br, zstd,
    /// chains). `None` when the exchange has no response, the coding is unknown or corrupt, or
    /// the stored or decoded body exceeds `limit` bytes. Errors only for a missing exchange or a
    /// storage failure.
    pub fn decoded_response_body(
        &self,
        id: crate::ExchangeId,
        limit: u64,
    ) -> crate::Result<Option<Vec<u8>>> {
        let ex = self.exchange(id)?;
        let Some(resp) = &ex.response else {
            return Ok(None);
        };
        if ex.response_body.len > limit {
            return Ok(None);
        }
        let raw = self.body_bytes(id, crate::Part::Response, limit)?;
        let coding = crate::header_value(&resp.headers, "content-encoding")
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        Ok(decode(&coding, &raw, limit))
    }
}

fn read_limited(reader: impl Read, limit: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let n = reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .ok()?;
    if n as u64 > limit {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_and_chained_encodings_decode() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"hello hello hello").unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decode("gzip", &gz, 1000).unwrap(), b"hello hello hello");
        let twice = zstd::encode_all(&gz[..], 3).unwrap();
        assert_eq!(
            decode("gzip, zstd", &twice, 1000).unwrap(),
            b"hello hello hello"
        );
        assert!(decode("gzip", &gz, 5).is_none(), "limit enforced");
        assert!(decode("compress", &gz, 1000).is_none());
        assert!(decode("gzip", b"not gzip", 1000).is_none());
    }
}
