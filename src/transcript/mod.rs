//! Claude Code transcripts (JSON Lines) as tolerant records, read incrementally.
//!
//! Nothing here knows about git or events: this layer turns bytes into [`record::Entry`]s,
//! counts what it had to skip, and tells where it may resume.

pub mod agent;
pub mod codex;
pub mod cursor;
pub mod gemini;
pub mod locate;
pub mod reader;
pub mod record;
pub mod root;

use std::fs::File;
use std::io;
use std::path::Path;

/// Open the transcript at `path` for reading: a regular file, or a link to one. Anything else is
/// refused, before it is opened and again on the open handle (the path may have changed in
/// between): a named pipe blocks the open until a writer comes, a device such as `/dev/zero`
/// never ends, and a directory has no lines.
pub fn open(path: &Path) -> io::Result<File> {
    let refuse = |kind: std::fs::FileType| match kind.is_dir() {
        true => io::Error::other("it is a directory"),
        false => io::Error::other("it is not a regular file"),
    };
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(refuse(kind));
    }
    let file = File::open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(refuse(kind));
    }
    Ok(file)
}
