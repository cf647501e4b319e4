//! Retrieval: from git's own signals back to the reasoning (docs/commands.md, `why` and `query`).

pub mod binary;
pub mod diff;
pub mod head;
pub mod hints;
pub mod index;
pub mod query;
pub mod review;
pub mod why;
