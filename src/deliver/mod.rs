//! Delivery (docs/hooks.md, "Claude Code hooks"): what goes back into a Claude Code session — the
//! context its hooks inject, once each per session, the brief and the continuation, CLAUDE.md —
//! and how Claude Code and git are hooked up to it (`hookup/`). What people read (a review as
//! text or Markdown) is `crate::render`'s.

pub mod adapter;
pub mod brief;
pub mod claude_md;
pub mod continuation;
pub mod hooks;
pub mod hookup;
pub mod injected;
pub mod links;

use std::path::PathBuf;

/// An error and its causes on one line: what a hook says on stderr and in the log.
pub(crate) use crate::store::error_chain as reason;

/// Why something could not be given back: the store failed, or a file a repository brings (a
/// template, CLAUDE.md) cannot be used as it is.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Render(#[from] crate::render::Error),
    #[error("this repository has no working tree, so no CLAUDE.md")]
    NoWorkTree,
    #[error("{}: not UTF-8 text", .0.display())]
    NotText(PathBuf),
    #[error("cannot read {}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {markers}", path.display())]
    Markers {
        path: PathBuf,
        markers: claude_md::Markers,
    },
    #[error(transparent)]
    Link(#[from] links::Error),
    #[error(transparent)]
    Ingest(#[from] crate::ingest::Error),
    #[error(transparent)]
    Store(#[from] crate::store::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
