//! Streaming, bounded-memory line reader over a transcript that may still be being written.
//!
//! Invariants: memory is bounded by `max_line` whatever the file size; a line longer than that
//! is skipped (and counted) without being held; a last line with no newline is *not*
//! consumed unless it is already complete JSON, because Claude Code may still be writing it —
//! the caller's cursor stays before it and the next run reads it whole.

use std::io::{self, BufRead};

/// The longest line we hold in memory. Real transcript lines reach a few MiB (pasted images,
/// large tool outputs); a longer one is skipped and counted.
pub const DEFAULT_MAX_LINE: usize = 16 << 20;

/// What one call to [`LineReader::next_line`] found.
#[derive(Debug)]
pub enum Line<'b> {
    /// A whole line (without its newline), starting at byte `offset` of the file.
    Complete { offset: u64, bytes: &'b [u8] },
    /// A line longer than the limit; it was consumed and dropped.
    Oversized { offset: u64, len: u64 },
    /// Bytes after the last newline, not consumed: the writer may not have finished them.
    Tail { offset: u64, len: u64 },
}

pub struct LineReader<R> {
    inner: R,
    offset: u64,
    buf: Vec<u8>,
    max_line: usize,
    /// Bytes of `inner`'s buffer handed out by the last call and not consumed yet.
    lent: usize,
}

impl<R: BufRead> LineReader<R> {
    /// `offset` is where `inner` is positioned in the file.
    pub fn new(inner: R, offset: u64, max_line: usize) -> Self {
        LineReader {
            inner,
            offset,
            buf: Vec::new(),
            max_line,
            lent: 0,
        }
    }

    /// The offset just past the last consumed line: where a cursor may safely resume.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next line, or `None` at the end of the file.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.inner.consume(std::mem::take(&mut self.lent));
        // Fast path: the whole line is already in the reader's buffer; lend it without copying.
        let whole = match self.inner.fill_buf() {
            Ok(chunk) => memchr::memchr(b'\n', chunk).filter(|&i| i <= self.max_line),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => None,
            Err(e) => return Err(e),
        };
        if let Some(i) = whole {
            let start = self.offset;
            self.offset += i as u64 + 1;
            self.lent = i + 1;
            let chunk = self.inner.fill_buf()?;
            let line = &chunk[..i];
            let bytes = line.strip_suffix(b"\r").unwrap_or(line);
            return Ok(Some(Line::Complete {
                offset: start,
                bytes,
            }));
        }
        self.buf.clear();
        let start = self.offset;
        let mut len: u64 = 0;
        let mut oversized = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                // End of file before a newline.
                if len == 0 {
                    return Ok(None);
                }
                if oversized {
                    // Still being written, perhaps: read (and skip) it whole next time.
                    return Ok(Some(Line::Tail { offset: start, len }));
                }
                let complete = serde_json::from_slice::<serde::de::IgnoredAny>(&self.buf).is_ok();
                if complete {
                    self.offset = start + len;
                    return Ok(Some(Line::Complete {
                        offset: start,
                        bytes: &self.buf,
                    }));
                }
                return Ok(Some(Line::Tail { offset: start, len }));
            }
            let (take, found) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let body = if found { &chunk[..take - 1] } else { chunk };
            if !oversized {
                if self.buf.len() + body.len() > self.max_line {
                    oversized = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(body);
                }
            }
            len += take as u64;
            self.inner.consume(take);
            if found {
                self.offset = start + len;
                if oversized {
                    return Ok(Some(Line::Oversized {
                        offset: start,
                        len: len - 1,
                    }));
                }
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
                return Ok(Some(Line::Complete {
                    offset: start,
                    bytes: &self.buf,
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines, read through a tiny buffer (lines span many reads) and a roomy one (lines are
    /// lent out of the buffer); both must agree.
    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let small = lines_with(input, max, 4);
        assert_eq!(
            small,
            lines_with(input, max, 64),
            "buffer size changes nothing"
        );
        small
    }

    fn lines_with(input: &[u8], max: usize, capacity: usize) -> Vec<String> {
        let mut r = LineReader::new(io::BufReader::with_capacity(capacity, input), 0, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(match l {
                Line::Complete { offset, bytes } => {
                    format!("{offset}:{}", String::from_utf8_lossy(bytes))
                }
                Line::Oversized { offset, len } => format!("{offset}:big{len}"),
                Line::Tail { offset, len } => {
                    out.push(format!("{offset}:tail{len}"));
                    break;
                }
            });
        }
        out.push(format!("end@{}", r.offset()));
        out
    }

    #[test]
    fn splits_lines_and_tracks_offsets_across_small_buffers() {
        assert_eq!(
            lines(b"{}\n{\"a\":1}\r\n", 100),
            ["0:{}", "3:{\"a\":1}", "end@12"]
        );
    }

    #[test]
    fn oversized_lines_are_skipped_whole() {
        assert_eq!(lines(b"{}\n0123456789", 5), ["0:{}", "3:tail10", "end@3"]);
        assert_eq!(
            lines(b"{}\n0123456789\n{}\n", 5),
            ["0:{}", "3:big10", "14:{}", "end@17"]
        );
    }

    #[test]
    fn unfinished_tail_is_not_consumed_but_a_finished_one_is() {
        assert_eq!(lines(b"{}\n{\"a\":", 100), ["0:{}", "3:tail5", "end@3"]);
        assert_eq!(
            lines(b"{}\n{\"a\":1}", 100),
            ["0:{}", "3:{\"a\":1}", "end@10"]
        );
    }
}
