//! Delivery (DESIGN §9): what goes back into a Claude Code session — the context its hooks
//! inject, once each per session.

pub mod hooks;
pub mod injected;
