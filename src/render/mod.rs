//! Rendering: the templates every text we make goes through, for the model or for people
//! (`templates.rs`: built in, or a repository's own, sanitised for their reader), and code
//! review as people read it — the terminal's text (`text.rs`) and a pull-request comment's
//! Markdown (`markdown.rs`) for `show`, `review` and `log` (their JSON is the review itself).

pub mod markdown;
pub mod templates;
pub mod text;

use std::path::PathBuf;

/// Why a template cannot be used: a repository's own that is not a regular file inside it, or
/// one that does not render.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("template {origin}")]
    Template {
        origin: String,
        source: minijinja::Error,
    },
    #[error("cannot read template {relative}")]
    TemplateUnreadable {
        relative: String,
        source: std::io::Error,
    },
    #[error(
        "template {relative}: {} is a symbolic link; a repository's templates must be regular \
         files inside it", shown.display()
    )]
    TemplateLink { relative: String, shown: PathBuf },
    #[error("template {0} is not a regular file")]
    TemplateNotAFile(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
