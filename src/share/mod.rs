//! Sharing the notes with a team through any git remote (docs/sharing.md).
//!
//! [`sync`] fetches a remote's notes into `refs/notes/remotes/<remote>/agent-context`, merges
//! them into ours as a union by event id, and pushes the result back. The push is never
//! forced: our notes commit has the remote's tip as a parent, so it is a fast-forward of what
//! we fetched, and git's receive-pack updates the remote ref only if it still holds that tip
//! (a compare-and-swap). When another clone pushed in between, the push is rejected and the
//! round is done again on top of theirs. The graph and the retrieval index then take in what
//! the merge brought, session by session.

pub mod export;
pub mod level;
pub mod sync;
