//! `agent-context/log`: one line per hook run that did something or failed, so that a hook,
//! which must stay quiet and never fail, can still say what happened. Kept under
//! 1 MiB: past that the file becomes `log.1` (replacing the older one).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::{Result, Store, io_error};
use crate::event::time::{now_seconds, rfc3339};

pub const FILE: &str = "log";
const MAX_BYTES: u64 = 1 << 20;

/// Append `<time> <what>: <message>` to the log.
pub fn append(store: &Store, what: &str, message: &str) -> Result<()> {
    append_in(store.dir(), what, message)
}

/// [`append`] to the log of the store in `dir`.
pub fn append_in(dir: &Path, what: &str, message: &str) -> Result<()> {
    fs::create_dir_all(dir).map_err(io_error("cannot create", dir))?;
    let path = dir.join(FILE);
    if fs::metadata(&path).is_ok_and(|m| m.len() > MAX_BYTES) {
        let old = dir.join(format!("{FILE}.1"));
        fs::rename(&path, &old).map_err(io_error("cannot replace", &old))?;
    }
    let line = format!(
        "{} {what}: {}\n",
        rfc3339(now_seconds()),
        crate::sanitise::line(message)
    );
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(io_error("cannot open", &path))?;
    file.write_all(line.as_bytes())
        .map_err(io_error("cannot write", &path))
}
