//! Delivery (docs/hooks.md, "Claude Code hooks"): what goes back into a Claude Code session — the
//! context its hooks inject, once each per session.

pub mod brief;
pub mod claude_md;
pub mod continuation;
pub mod hooks;
pub mod injected;
pub mod install;
pub mod links;
pub mod review;
pub mod templates;

/// An error and its causes on one line: what a hook says on stderr and in the log.
pub(crate) use crate::store::error_chain as reason;
