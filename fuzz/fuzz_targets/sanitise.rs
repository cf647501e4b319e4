//! What leaves the tool for a terminal, a model or Markdown (`sanitise`), and the templates a
//! repository brings (`templates::render_untrusted`): any input gives an answer, never a panic
//! or a hang.
//!
//! The input is split at its first NUL: text to sanitise (and the template's source), then a
//! JSON context for the template. Checked beyond "no panic":
//! - `text` leaves no control character but newline and tab, no bidi override, and is stable
//!   (sanitising its output changes nothing); `line` and `field` hold no newline, `field` no
//!   `</` and no turn marker starting a word (`Human:`, `user：`);
//! - a template renders within its fuel and output cap, and its output passes `text` unchanged.
#![no_main]

use std::sync::LazyLock;

use git_agent_context::classify::redact::Redactor;
use git_agent_context::render::templates::{OVERRIDE_OUTPUT, render_untrusted};
use git_agent_context::sanitise::{self, Reader};
use libfuzzer_sys::fuzz_target;

static REDACTOR: LazyLock<Redactor> = LazyLock::new(Redactor::default);


/// Whether `text` holds a turn marker: `Human:` and the like, starting a word.
fn turn_marker(text: &str) -> bool {
    ["human", "assistant", "system", "user"].iter().any(|marker| {
        text.char_indices().any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let rest = &text[at..];
            before.is_none_or(|c| !c.is_alphanumeric())
                && rest.len() > marker.len()
                && rest.is_char_boundary(marker.len())
                && rest[..marker.len()].eq_ignore_ascii_case(marker)
                && rest[marker.len()..].trim_start_matches(' ').starts_with([':', '：'])
        })
    })
}

fuzz_target!(|data: &[u8]| {
    let (raw, rest) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let raw = String::from_utf8_lossy(raw);

    let text = sanitise::text(&raw);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{text:?}"
    );
    assert!(!text.chars().any(|c| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')));
    assert_eq!(sanitise::text(&text), text, "stable");
    let line = sanitise::line(&raw);
    assert!(!line.contains(['\n', '\r']), "{line:?}");
    let field = sanitise::field(&raw);
    assert!(!field.contains('\n') && !field.contains("</") && !turn_marker(&field), "{field:?}");

    let context: serde_json::Value = serde_json::from_slice(rest).unwrap_or_default();
    let _ = sanitise::context(&context, Reader::Agent);
    if let Ok(out) = render_untrusted(&raw, &context, &REDACTOR) {
        assert!(out.len() <= OVERRIDE_OUTPUT, "{}", out.len());
        assert_eq!(sanitise::text(&out), out);
    }
});
