//! Telling text from binary content, as git does.

/// Whether content is text, as git decides it: no NUL in its first 8,000 bytes.
pub fn is_text(data: &[u8]) -> bool {
    !data.iter().take(8000).any(|&b| b == 0)
}
