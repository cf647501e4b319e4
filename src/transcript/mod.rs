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
/// never ends, and a directory has no lines. The open itself does not wait (`O_NONBLOCK`,
/// which changes nothing in reading a regular file), so that a pipe put in the file's place
/// between the two is refused as well.
pub fn open(path: &Path) -> io::Result<File> {
    open_regular(path, true)
}

/// [`open`], refusing a link as well, even one put in the file's place as it is opened
/// (`O_NOFOLLOW`).
pub fn open_unlinked(path: &Path) -> io::Result<File> {
    open_regular(path, false)
}

fn open_regular(path: &Path, follow: bool) -> io::Result<File> {
    let refuse = |kind: std::fs::FileType| match kind.is_dir() {
        true => io::Error::other("it is a directory"),
        false => io::Error::other("it is not a regular file"),
    };
    let kind = match follow {
        true => std::fs::metadata(path)?.file_type(),
        false => std::fs::symlink_metadata(path)?.file_type(),
    };
    if !kind.is_file() {
        return Err(refuse(kind));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    without_waiting(&mut options, follow);
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(refuse(kind));
    }
    Ok(file)
}

/// An open that does not wait for a writer (`O_NONBLOCK`) nor, unless `follow`, follow a link
/// (`O_NOFOLLOW`).
#[cfg(unix)]
fn without_waiting(options: &mut std::fs::OpenOptions, follow: bool) {
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags(libc::O_NONBLOCK | if follow { 0 } else { libc::O_NOFOLLOW });
}

/// Elsewhere the flags do not exist; the checks before and after the open stand.
#[cfg(not(unix))]
fn without_waiting(_options: &mut std::fs::OpenOptions, _follow: bool) {}
