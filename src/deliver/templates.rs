//! The templates delivery renders through: built into the binary from `templates/`, each
//! overridable by a file of the same name in the repository's `.agent-context/templates/`.

use std::fs;

use crate::retrieve::query::estimate_tokens;
use crate::store::Store;

/// Where a repository keeps its own templates, from the top of its working tree.
const OVERRIDES: &str = ".agent-context/templates";

/// A template: its file name and the text built into the binary.
pub struct Template {
    pub name: &'static str,
    pub builtin: &'static str,
}

/// The continuation of a session after a compaction or a resume.
pub const CONTINUATION: Template = Template {
    name: "continuation.md.j2",
    builtin: include_str!("../../templates/continuation.md.j2"),
};

/// The brief a new session starts with.
pub const BRIEF: Template = Template {
    name: "brief.md.j2",
    builtin: include_str!("../../templates/brief.md.j2"),
};

/// The section of CLAUDE.md between the markers.
pub const CLAUDE_MD: Template = Template {
    name: "claude-md.md.j2",
    builtin: include_str!("../../templates/claude-md.md.j2"),
};

/// Render `template` with `context`: the repository's override if it has one, else the
/// built-in text. A bad override is an error naming its file.
pub fn render(
    store: &Store,
    template: &Template,
    context: &serde_json::Value,
) -> Result<String, String> {
    let path = store
        .workdir()
        .map(|w| w.join(OVERRIDES).join(template.name));
    let (source, origin) = match path.filter(|p| p.is_file()) {
        Some(path) => {
            let text = fs::read_to_string(&path)
                .map_err(|e| format!("cannot read template {}: {e}", path.display()))?;
            (text, format!("{OVERRIDES}/{}", template.name))
        }
        None => (
            template.builtin.to_owned(),
            format!("templates/{}", template.name),
        ),
    };
    let env = minijinja::Environment::new();
    env.render_str(
        &source,
        minijinja::Value::from(minijinja::value::Serde(context)),
    )
    .map_err(|e| format!("template {origin}: {e}"))
}

/// `text` cut at a line so that it fits `tokens`.
pub fn within(text: String, tokens: usize) -> String {
    if estimate_tokens(&text) <= tokens {
        return text;
    }
    // Line by line, each counted with its newline: the sum never falls short of the whole.
    let (mut out, mut used) = (String::new(), 0);
    for line in text.lines() {
        used += estimate_tokens(line) + 1;
        if used > tokens {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
