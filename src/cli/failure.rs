//! How a command failed: the one place that turns an error into an exit code and the line
//! that says it (the part jj's `command_error.rs` plays). Each library error converts with
//! `?`, and its conversion decides, from its kind, which of the three it is:
//!
//! - **bad input** (exit 2): bad usage, or input that cannot be used as it is — an argument,
//!   a transcript, a repository or a store that cannot be read or written as it is (an object
//!   missing or corrupt, a store file of the wrong kind, a ref that cannot be made), a file a
//!   repository brings (a template, CLAUDE.md, a settings file) that is not what it must be;
//! - **a failure** (exit 1): nothing found, other writers holding the store or moving a ref
//!   under every attempt, a remote refusing, or the machine failing (a full disk, in our own
//!   files or inside gix) — the same command may work later;
//! - **closed** (exit 0, nothing said): our output was closed (`| head`, a pager quit).

use std::io;

use crate::app::{forget, install};
use crate::deliver::{self, hookup, links};
use crate::ingest::{self, recorded};
use crate::render;
use crate::retrieve::{review, why};
use crate::share::{export, sync};
use crate::store;

/// How a command failed, and why.
#[derive(Debug)]
pub struct Failure {
    code: Code,
    error: anyhow::Error,
    /// What to do about it, when there is something to do.
    hint: Option<String>,
}

/// What a failure makes of the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Bad usage or bad input: exit 2.
    Usage = 2,
    /// Nothing found, or a failure: exit 1.
    Failed = 1,
    /// Our output was closed: exit 0, nothing said.
    Closed = 0,
}

impl Failure {
    /// Bad usage or bad input: exit 2.
    pub fn usage(e: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: Code::Usage,
            error: e.into(),
            hint: None,
        }
    }

    /// Nothing found, or a failure: exit 1.
    pub fn failed(e: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: Code::Failed,
            error: e.into(),
            hint: None,
        }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    /// The line that says it: `error: <the error and its causes>`, then what to do about it
    /// when there is something to do; `None` for a closed output.
    pub fn message(&self) -> Option<String> {
        if self.code == Code::Closed {
            return None;
        }
        // An error may quote what a repository holds (a configuration value, a path): no
        // escape sequence of its reaches the terminal.
        let mut text = format!(
            "error: {}",
            crate::sanitise::text(&format!("{:#}", self.error))
        );
        if let Some(hint) = &self.hint {
            text.push('\n');
            text.push_str(hint);
        }
        Some(text)
    }
}

/// An I/O error of the machine, not of what it holds: the same operation may work later.
fn machine_failure(kind: io::ErrorKind) -> bool {
    use io::ErrorKind::*;
    matches!(
        kind,
        StorageFull | QuotaExceeded | OutOfMemory | Interrupted | TimedOut | ResourceBusy
    )
}

/// Our own output failed: closed (`| head`), or the machine.
impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        let code = match e.kind() {
            io::ErrorKind::BrokenPipe => Code::Closed,
            _ => Code::Failed,
        };
        Failure {
            code,
            error: e.into(),
            hint: None,
        }
    }
}

/// What the command line says itself, with its context: a failure unless it says otherwise.
impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::failed(e)
    }
}

/// A repository or store that cannot be read or written as it is is bad input; other writers
/// and the machine are failures.
impl From<store::Error> for Failure {
    fn from(e: store::Error) -> Failure {
        // What to do about it, in git's words.
        let hint = match &e {
            store::Error::DubiousOwnership { path } => Some(format!(
                "To add an exception for this directory, call:\n\n\tgit config --global --add safe.directory {}",
                path.display()
            )),
            _ => None,
        };
        let damaged = match &e {
            store::Error::Busy | store::Error::Contended { .. } => false,
            store::Error::Io { source, .. } => !machine_failure(source.kind()),
            store::Error::Git { io: Some(kind), .. } => !machine_failure(*kind),
            _ => true,
        };
        let failure = match damaged {
            true => Failure::usage(e),
            false => Failure::failed(e),
        };
        Failure { hint, ..failure }
    }
}

impl From<store::PathError> for Failure {
    fn from(e: store::PathError) -> Failure {
        Failure::usage(e)
    }
}

/// A transcript that cannot be read is a failure where many are read (the command says which
/// it skipped); `extract --transcript` makes it bad input itself.
impl From<ingest::Error> for Failure {
    fn from(e: ingest::Error) -> Failure {
        match e {
            ingest::Error::Store(e) => e.into(),
            e => Failure::failed(e),
        }
    }
}

impl From<why::Error> for Failure {
    fn from(e: why::Error) -> Failure {
        match e {
            why::Error::Store(e) => e.into(),
            e => Failure::usage(e),
        }
    }
}

/// Bad revisions and ranges are bad input.
impl From<review::Error> for Failure {
    fn from(e: review::Error) -> Failure {
        match e {
            review::Error::Store(e) => e.into(),
            review::Error::Output(e) => e.into(),
            e => Failure::usage(e),
        }
    }
}

impl From<recorded::Error> for Failure {
    fn from(e: recorded::Error) -> Failure {
        match e {
            recorded::Error::Store(e) => e.into(),
            recorded::Error::Revision(e) => e.into(),
            e => Failure::usage(e),
        }
    }
}

impl From<export::SessionError> for Failure {
    fn from(e: export::SessionError) -> Failure {
        match e {
            export::SessionError::Store(e) => e.into(),
            e => Failure::usage(e),
        }
    }
}

/// A remote that is not there is bad usage; one that refuses, or keeps moving, is a failure.
impl From<sync::Error> for Failure {
    fn from(e: sync::Error) -> Failure {
        match e {
            sync::Error::NoSuchRemote(_) | sync::Error::NoRemote => Failure::usage(e),
            sync::Error::Store(e) => e.into(),
            e => Failure::failed(e),
        }
    }
}

/// A link out of the folder it belongs to is refused: bad input.
impl From<links::Error> for Failure {
    fn from(e: links::Error) -> Failure {
        Failure::usage(e)
    }
}

/// A settings file that is not what it must be is bad input; a write that fails is not.
impl From<hookup::Error> for Failure {
    fn from(e: hookup::Error) -> Failure {
        match e {
            hookup::Error::Store(e) => e.into(),
            e if e.is_bad_input() => Failure::usage(e),
            e => Failure::failed(e),
        }
    }
}

/// A template or a CLAUDE.md the repository brings that cannot be used is bad input; the
/// store's errors are the store's.
impl From<deliver::Error> for Failure {
    fn from(e: deliver::Error) -> Failure {
        match e {
            deliver::Error::Store(e) => e.into(),
            deliver::Error::Ingest(e) => e.into(),
            deliver::Error::Link(e) => e.into(),
            deliver::Error::Render(e) => e.into(),
            deliver::Error::Unreadable { path, source } => {
                let machine = machine_failure(source.kind());
                let e = deliver::Error::Unreadable { path, source };
                match machine {
                    true => Failure::failed(e),
                    false => Failure::usage(e),
                }
            }
            e => Failure::usage(e),
        }
    }
}

/// An option that cannot be followed, or a settings file that is not what it must be, is bad
/// input; the store's errors and a remote's are theirs.
impl From<install::Error> for Failure {
    fn from(e: install::Error) -> Failure {
        match e {
            install::Error::Settings(e) => e.into(),
            install::Error::Sync(e) => e.into(),
            install::Error::Store(e) => e.into(),
            install::Error::Link(e) => e.into(),
            e => Failure::usage(e),
        }
    }
}

/// A template that cannot be used (a repository's own, most often) is bad input.
impl From<render::Error> for Failure {
    fn from(e: render::Error) -> Failure {
        Failure::usage(e)
    }
}

/// What was named and is not stored: nothing found; a prefix naming several: bad input.
impl From<forget::Error> for Failure {
    fn from(e: forget::Error) -> Failure {
        match e {
            forget::Error::Store(e) => e.into(),
            forget::Error::Deliver(e) => e.into(),
            e if e.not_found() => Failure::failed(e),
            e => Failure::usage(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(kind: Option<io::ErrorKind>) -> store::Error {
        store::Error::Git {
            action: "write a note".to_owned(),
            message: "…".to_owned(),
            io: kind,
        }
    }

    fn code(e: impl Into<Failure>) -> Code {
        e.into().code()
    }

    #[test]
    fn a_full_disk_or_a_crowd_is_a_failure_and_damage_is_bad_input() {
        assert_eq!(code(git(Some(io::ErrorKind::StorageFull))), Code::Failed);
        assert_eq!(code(git(Some(io::ErrorKind::QuotaExceeded))), Code::Failed);
        assert_eq!(
            code(store::Error::Contended {
                refname: "refs/agent-context",
                attempts: 100,
            }),
            Code::Failed
        );
        assert_eq!(code(store::Error::Busy), Code::Failed);
        assert_eq!(code(git(None)), Code::Usage);
        assert_eq!(code(git(Some(io::ErrorKind::InvalidData))), Code::Usage);
        assert_eq!(code(git(Some(io::ErrorKind::IsADirectory))), Code::Usage);
        // Wrapped, it is judged the same.
        assert_eq!(
            code(ingest::Error::Store(git(Some(io::ErrorKind::StorageFull)))),
            Code::Failed
        );
        assert_eq!(code(deliver::Error::Store(git(None))), Code::Usage);
    }

    #[test]
    fn the_io_error_under_a_gix_error_is_kept() {
        let full = io::Error::from(io::ErrorKind::StorageFull);
        let e = gix::Exn::new(full)
            .raise(gix::error::message("could not write a loose object"))
            .into_error();
        let ours = store::git_error("write a note")(e);
        assert!(
            matches!(
                ours,
                store::Error::Git {
                    io: Some(io::ErrorKind::StorageFull),
                    ..
                }
            ),
            "{ours:?}"
        );
        assert_eq!(code(ours), Code::Failed);
    }

    #[test]
    fn a_claude_md_that_cannot_be_written_for_want_of_room_is_a_failure() {
        let full = store::Error::Io {
            action: "cannot write",
            path: "CLAUDE.md".into(),
            source: io::Error::from(io::ErrorKind::StorageFull),
        };
        assert_eq!(code(deliver::Error::Store(full)), Code::Failed);
        let markers = deliver::Error::Markers {
            path: "CLAUDE.md".into(),
            markers: deliver::claude_md::Markers::OutOfOrder,
        };
        assert_eq!(code(markers), Code::Usage);
    }

    #[test]
    fn a_closed_output_is_said_by_nothing() {
        let closed = Failure::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(closed.code(), Code::Closed);
        assert_eq!(closed.message(), None);
    }
}
