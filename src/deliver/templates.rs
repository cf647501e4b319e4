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

/// A pull-request comment on a change: `show` and `review` as Markdown.
pub const REVIEW: Template = Template {
    name: "review.md.j2",
    builtin: include_str!("../../templates/review.md.j2"),
};

/// `log` as Markdown.
pub const LOG: Template = Template {
    name: "log.md.j2",
    builtin: include_str!("../../templates/log.md.j2"),
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
    let mut env = minijinja::Environment::new();
    env.add_filter("md", |text: String| markdown_text(&text));
    env.add_filter("code", |text: String| code_span(&text));
    env.add_filter("html", |text: String| html_text(&text));
    env.render_str(
        &source,
        minijinja::Value::from(minijinja::value::Serde(context)),
    )
    .map_err(|e| format!("template {origin}: {e}"))
}

/// `text` as literal Markdown on one line: white space folded, the characters that would
/// make emphasis, links, code, tables or HTML escaped — what an agent wrote can never turn into
/// markup (or raw HTML) in a pull-request comment.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        for c in word.chars() {
            match c {
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '&' => out.push_str("&amp;"),
                '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '!' => {
                    out.push('\\');
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }
    out
}

/// `text` inside HTML (a `<summary>`): `&`, `<`, `>` and `"` as entities, control characters
/// (a newline in a file name) as spaces, so that the element stays on its line.
pub fn html_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if c.is_control() => out.push(' '),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a Markdown code span: fenced by more backticks than it holds in a row, padded
/// when it starts or ends with one; white space folded.
pub fn code_span(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let fence = "`".repeat(longest_run(&text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// The fence of a fenced code block holding `text`: three backticks, or more than any run of
/// backticks in it.
pub fn code_fence(text: &str) -> String {
    "`".repeat(longest_run(text, '`').max(2) + 1)
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_text_is_literal() {
        assert_eq!(
            markdown_text("use <details> & *not*\n  `x` [link](y) a|b"),
            r"use &lt;details&gt; &amp; \*not\* \`x\` \[link\](y) a\|b"
        );
        assert_eq!(markdown_text("# heading"), r"\# heading");
        assert_eq!(
            html_text(r#"a/b <i> & "c""#),
            "a/b &lt;i&gt; &amp; &quot;c&quot;"
        );
    }

    #[test]
    fn code_spans_and_fences_outlast_the_backticks_inside() {
        assert_eq!(code_span("src/a.rs"), "`src/a.rs`");
        assert_eq!(code_span("a `b` c"), "``a `b` c``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_fence("+let a = 1;"), "```");
        assert_eq!(code_fence("+```rust\n+````"), "`````");
    }
}
