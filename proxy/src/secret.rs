//! Per-run secrets.

/// A fresh per-run secret: 128 random bits, hex encoded.
pub fn random_secret() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
