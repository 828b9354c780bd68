//! Lowercase hex of random or hashed bytes: the text of every id and token the server makes
//! (bots, tables, matches, accounts). Kept at the bottom layer so that any layer may name
//! things without importing the edge's authentication.

/// `bytes` as lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    // By table, not `write!`: every call hashes its token, and formatting cost as much as SHA-256.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}
