//! Where extraction of one transcript stopped, and whether it may resume there.
//!
//! A cursor is a byte offset plus an identity of the file it points into. Transcripts are
//! append-only, so a file that is now shorter than the offset, has another inode, or whose
//! first bytes differ from those we read was truncated or replaced: extraction restarts from
//! the beginning (event ids are stable, so nothing is duplicated).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many leading bytes identify a file's content.
const HEAD_LEN: u64 = 4096;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    /// How many leading bytes `head_hash` covers (less than 4 KiB for short files).
    pub head_len: u64,
    pub head_hash: String,
}

/// Lines read and lines skipped, over the life of a cursor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LineCounts {
    pub read: u64,
    /// Not JSON, not UTF-8, not an object, or cut short.
    pub malformed: u64,
    /// Longer than the reader's limit.
    pub oversized: u64,
}

impl LineCounts {
    pub fn skipped(&self) -> u64 {
        self.malformed + self.oversized
    }

    pub fn add(&mut self, other: LineCounts) {
        self.read += other.read;
        self.malformed += other.malformed;
        self.oversized += other.oversized;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    #[serde(with = "lossy_path")]
    pub path: PathBuf,
    pub offset: u64,
    pub identity: Identity,
    pub lines: LineCounts,
    /// Bytes after the last newline that were not yet readable as a line.
    pub tail_bytes: u64,
}

/// Why a cursor could not be resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    New,
    Truncated,
    Replaced,
}

impl Cursor {
    pub fn new(path: &Path) -> Cursor {
        Cursor {
            path: path.to_owned(),
            offset: 0,
            identity: Identity::default(),
            lines: LineCounts::default(),
            tail_bytes: 0,
        }
    }

    /// Check the cursor against the file as it is now: `Ok(())` to resume at `offset`.
    pub fn check(&self, file: &mut File) -> io::Result<Result<(), Restart>> {
        if self.offset == 0 {
            return Ok(Err(Restart::New));
        }
        let meta = file.metadata()?;
        if meta.len() < self.offset {
            return Ok(Err(Restart::Truncated));
        }
        let (dev, ino) = dev_ino(&meta);
        if (dev, ino) != (self.identity.dev, self.identity.ino) {
            return Ok(Err(Restart::Replaced));
        }
        if head_hash(file, self.identity.head_len)? != self.identity.head_hash {
            return Ok(Err(Restart::Replaced));
        }
        Ok(Ok(()))
    }

    /// Record the identity of `file` after reading up to `offset`.
    pub fn advance(&mut self, file: &mut File, offset: u64) -> io::Result<()> {
        let meta = file.metadata()?;
        let (dev, ino) = dev_ino(&meta);
        let head_len = offset.min(HEAD_LEN);
        self.identity = Identity {
            dev,
            ino,
            head_len,
            head_hash: head_hash(file, head_len)?,
        };
        self.offset = offset;
        Ok(())
    }
}

/// Paths as JSON strings even when they are not UTF-8 (shown with U+FFFD; the state file is
/// found by a hash of the real bytes, so nothing depends on reading the path back exactly).
pub mod lossy_path {
    use std::path::{Path, PathBuf};

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&path.to_string_lossy())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        String::deserialize(d).map(PathBuf::from)
    }
}

fn head_hash(file: &mut File, len: u64) -> io::Result<String> {
    use std::io::Seek;
    file.seek(io::SeekFrom::Start(0))?;
    let mut head = Vec::with_capacity(len as usize);
    file.by_ref().take(len).read_to_end(&mut head)?;
    Ok(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&head)))
}

#[cfg(unix)]
fn dev_ino(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn dev_ino(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn detects_truncation_and_replacement() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        let mut f = File::open(&path).unwrap();
        let mut c = Cursor::new(&path);
        assert_eq!(c.check(&mut f).unwrap(), Err(Restart::New));
        c.advance(&mut f, 16).unwrap();
        assert_eq!(c.check(&mut f).unwrap(), Ok(()));

        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{}\n")
            .unwrap();
        assert_eq!(c.check(&mut File::open(&path).unwrap()).unwrap(), Ok(()));

        std::fs::write(&path, b"{}\n").unwrap();
        assert_eq!(
            c.check(&mut File::open(&path).unwrap()).unwrap(),
            Err(Restart::Truncated)
        );

        // Same length, same inode, other content.
        std::fs::write(&path, b"{\"a\":9}\n{\"b\":2}\n").unwrap();
        assert_eq!(
            c.check(&mut File::open(&path).unwrap()).unwrap(),
            Err(Restart::Replaced)
        );

        // A new file at the same path.
        std::fs::remove_file(&path).unwrap();
        let other = dir.path().join("other");
        std::fs::write(&other, b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(
            c.check(&mut File::open(&path).unwrap()).unwrap(),
            Err(Restart::Replaced)
        );
    }
}
