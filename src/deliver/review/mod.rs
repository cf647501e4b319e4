//! Code review rendered: the terminal's text and a pull-request comment's Markdown for
//! `show`, `review` and `log` (their JSON is the review itself, serialized by the command).

pub mod markdown;
pub mod text;
