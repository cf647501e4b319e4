//! Splitting reasoning text (thinking, assistant text, plans, commit bodies) into sentences.
//!
//! Markdown is reduced to its words: fenced code blocks and indented code are dropped, bullet
//! and heading markers and emphasis are removed. Each sentence keeps the paragraph it came from,
//! which becomes an event's rationale, and the form of its line: prose, a list item, or a heading
//! or checklist line (which names or ticks off work, and does not reason about it).

/// A sentence: where it stands in its paragraph (no copy of the text is made).
#[derive(Debug, Clone, PartialEq)]
pub struct Sentence {
    pub paragraph: usize,
    pub range: std::ops::Range<usize>,
    pub form: Form,
    /// Where its paragraph's first line starts in the text split, in bytes: what stands
    /// before it there (a list of options) stands before the sentence.
    pub source: usize,
}

/// The kind of line a sentence's paragraph was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Prose,
    /// A bullet, a numbered line or a quote.
    Item,
    /// A heading or a checklist line (`- [ ]`, `- [x]`).
    Heading,
}

impl Sentence {
    pub fn text<'p>(&self, paragraphs: &'p [String]) -> &'p str {
        &paragraphs[self.paragraph][self.range.clone()]
    }
}

/// The paragraphs of `text` (prose only, markup removed) and their sentences.
pub fn split(text: &str) -> (Vec<String>, Vec<Sentence>) {
    let mut paragraphs: Vec<String> = Vec::new();
    // The form of each paragraph, and where its first line starts, by its index.
    let mut forms: Vec<Form> = Vec::new();
    let mut sources: Vec<usize> = Vec::new();
    let mut current = String::new();
    let mut source = 0;
    let mut in_fence = false;
    let flush = |current: &mut String,
                 paragraphs: &mut Vec<String>,
                 sources: &mut Vec<usize>,
                 source: usize| {
        if !current.trim().is_empty() {
            paragraphs.push(std::mem::take(current));
            sources.push(source);
        }
        current.clear();
    };
    for line in text.lines() {
        // `line` is a slice of `text`.
        let at = line.as_ptr() as usize - text.as_ptr() as usize;
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            flush(&mut current, &mut paragraphs, &mut sources, source);
            continue;
        }
        if in_fence || line.starts_with("    ") && current.is_empty() || trimmed.starts_with('|') {
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut current, &mut paragraphs, &mut sources, source);
            continue;
        }
        let (marker, content) = strip_marker(trimmed);
        // Each bullet or heading stands alone.
        let item = marker != Form::Prose;
        if item {
            flush(&mut current, &mut paragraphs, &mut sources, source);
        }
        if !current.is_empty() {
            current.push(' ');
        } else {
            source = at;
        }
        current.push_str(&strip_emphasis(content));
        if item {
            let before = paragraphs.len();
            flush(&mut current, &mut paragraphs, &mut sources, source);
            if paragraphs.len() > before {
                // The paragraphs between the last item and this one were prose.
                forms.resize(before, Form::Prose);
                forms.push(marker);
            }
        }
    }
    flush(&mut current, &mut paragraphs, &mut sources, source);

    let mut sentences = Vec::new();
    for (i, p) in paragraphs.iter().enumerate() {
        for s in split_sentences(p) {
            // `s` is a slice of `p`: its position is the distance between their starts.
            let start = s.as_ptr() as usize - p.as_ptr() as usize;
            sentences.push(Sentence {
                paragraph: i,
                range: start..start + s.len(),
                form: forms.get(i).copied().unwrap_or(Form::Prose),
                source: sources[i],
            });
        }
    }
    (paragraphs, sentences)
}

/// Remove a leading bullet, number, checkbox or heading marker; tell which there was.
fn strip_marker(line: &str) -> (Form, &str) {
    let heading = line.trim_start_matches('#');
    if heading.len() != line.len() && heading.starts_with(' ') {
        return (Form::Heading, heading.trim_start());
    }
    for box_ in ["- [ ] ", "- [x] ", "- [X] ", "* [ ] ", "* [x] "] {
        if let Some(rest) = line.strip_prefix(box_) {
            return (Form::Heading, rest.trim_start());
        }
    }
    for marker in ["- ", "* ", "+ ", "> "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return (Form::Item, rest.trim_start());
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits < 4 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return (Form::Item, rest.trim_start());
        }
    }
    (Form::Prose, line)
}

/// `s` without its emphasis (`**`, `__`).
pub(crate) fn strip_emphasis(s: &str) -> String {
    s.replace("**", "").replace("__", "")
}

/// Split a paragraph at `.`, `!` or `?` followed by a space and a capital, digit, quote or
/// opening mark — not inside abbreviations like "e.g. the" or "v1.2".
fn split_sentences(p: &str) -> Vec<&str> {
    let bytes = p.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    // Whether `p[..i]` leaves a code span open.
    let mut code = false;
    while i < bytes.len() {
        let b = bytes[i];
        // Where the sentence ends, past its marks and closing quotes: at the space after them.
        let ends = matches!(b, b'.' | b'!' | b'?' | b':').then(|| {
            let mut j = i + 1;
            while j < bytes.len() && matches!(bytes[j], b'.' | b'!' | b'?' | b')' | b'"' | b'\'') {
                j += 1;
            }
            j
        });
        let ends = ends.filter(|&j| {
            let spaced = j < bytes.len() && bytes[j] == b' ';
            let next = bytes.get(j + 1).copied().unwrap_or(b' ');
            spaced
                && (next.is_ascii_uppercase() || matches!(next, b'`' | b'"' | b'\'' | b'(' | b'*'))
                && (b != b':' || next.is_ascii_uppercase())
                && !abbreviation(&p[start..i])
        });
        // No code span opens or closes between `i` and `j`: they are marks and quotes.
        if let Some(j) = ends {
            push_trimmed(&mut out, &p[start..j]);
            start = j;
            i = j;
        } else {
            if glued(p, i, code) {
                push_trimmed(&mut out, &p[start..=i]);
                start = i + 1;
            }
            code ^= b == b'`';
        }
        i += 1;
    }
    push_trimmed(&mut out, &p[start..]);
    out
}

/// Words that start a sentence and never follow a dot in code (`os.Chdir`, `errors.Is`).
const STARTERS: &[&str] = &[
    "The", "This", "That", "These", "But", "Now", "So", "It", "We", "Let", "Actually", "However",
    "Also", "Then", "Wait", "Looking", "Since", "Because", "When", "Good", "Perfect", "Great",
];

/// Whether the end mark at `i` ends a sentence glued to the next, as thinking text written in
/// pieces has them ("…wasn't caught.Now that it is fixed…", "…it ran.The fix is to…", a
/// numbered list run into its lead-in: "The fix is to either:1. Keep…"), or a line with no
/// mark at all run into the next ("Use one constant in both placesThis makes…"), outside code
/// (`code`: whether a code span is open at `i`).
fn glued(p: &str, i: usize, code: bool) -> bool {
    let bytes = p.as_bytes();
    if bytes[i].is_ascii_lowercase() {
        // Not the words that often end identifiers (`assertThat`, `andThen`).
        return bytes.get(i + 1).is_some_and(u8::is_ascii_uppercase)
            && opener(&p[i + 1..])
                .is_some_and(|w| !["That", "Then", "It", "Now", "Since", "So"].contains(&w))
            && !code;
    }
    if bytes[i] == b':' {
        // A word's colon (not `main.rs:42.` nor `10:30.`), then "1. " and a capital.
        let word = p[..i].rsplit(' ').next().unwrap_or("");
        let lead_in =
            word.ends_with(|c: char| c.is_ascii_alphabetic()) && !word.contains(['.', '/']);
        let rest = &bytes[i + 1..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        return lead_in
            && (1..=2).contains(&digits)
            && rest.get(digits) == Some(&b'.')
            && rest.get(digits + 1) == Some(&b' ')
            && rest.get(digits + 2).is_some_and(u8::is_ascii_uppercase);
    }
    if !matches!(bytes[i], b'.' | b'!' | b'?') || i == 0 {
        return false;
    }
    let before = bytes[i - 1];
    if !(before.is_ascii_lowercase() || matches!(before, b')' | b'`')) {
        return false;
    }
    opener(&p[i + 1..]).is_some()
}

/// The word of [`STARTERS`] that `rest` opens with as a word of its own: a sentence's first
/// word, not the rest of an identifier (`getThisOne`).
fn opener(rest: &str) -> Option<&str> {
    let word_end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let word = &rest[..word_end];
    (STARTERS.contains(&word) && matches!(rest[word_end..].chars().next(), Some(' ' | ',')))
        .then_some(word)
}

fn abbreviation(before: &str) -> bool {
    let last = before.rsplit(' ').next().unwrap_or("").to_ascii_lowercase();
    matches!(
        last.as_str(),
        "e.g" | "i.e" | "etc" | "vs" | "cf" | "mr" | "dr" | "approx"
    )
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    if s.chars().filter(|c| c.is_alphabetic()).count() >= 3 {
        out.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(t: &str) -> Vec<String> {
        let (paragraphs, sentences) = split(t);
        sentences
            .iter()
            .map(|s| s.text(&paragraphs).to_owned())
            .collect()
    }

    #[test]
    fn splits_sentences_but_not_abbreviations() {
        assert_eq!(
            texts("Use a cursor, e.g. the offset. It's cheap! Is it? Yes. Version v1.2 works."),
            [
                "Use a cursor, e.g. the offset.",
                "It's cheap!",
                "Is it?",
                "Yes.",
                "Version v1.2 works."
            ]
        );
    }

    #[test]
    fn splits_sentences_glued_together_but_not_code() {
        assert_eq!(
            texts(
                "The test never ran.Now that it does, it fails.But `errors.Is` holds. Call os.Exit(1) or cmd.Dir = x at 10:30. It panics at main.rs:42. Then the fix is to either:1. Keep it"
            ),
            [
                "The test never ran.",
                "Now that it does, it fails.",
                "But `errors.Is` holds.",
                "Call os.Exit(1) or cmd.Dir = x at 10:30.",
                "It panics at main.rs:42.",
                "Then the fix is to either:",
                "Keep it"
            ]
        );
        // A line with no mark run into the next; not an identifier, nor inside code.
        assert_eq!(
            texts(
                "Use one constant in both placesThis makes the test less fragile. Call `getThis one` or getThisOne now. Use assertThat here."
            ),
            [
                "Use one constant in both places",
                "This makes the test less fragile.",
                "Call `getThis one` or getThisOne now.",
                "Use assertThat here."
            ]
        );
    }

    #[test]
    fn a_sentence_knows_where_its_paragraph_starts_in_the_text() {
        let text = "Options:\n1. **Keep** it\n\n```\ncode\n```\n**Option 1** wins. It is \
                    short.\nStill the same paragraph.";
        let (paragraphs, sentences) = split(text);
        let at = |said: &str| {
            let s = sentences
                .iter()
                .find(|s| s.text(&paragraphs) == said)
                .unwrap();
            s.source
        };
        assert_eq!(at("Options:"), 0);
        assert_eq!(at("Keep it"), text.find("1.").unwrap());
        assert_eq!(at("Option 1 wins."), text.find("**Option").unwrap());
        assert_eq!(
            at("Still the same paragraph."),
            text.find("**Option").unwrap()
        );
    }

    #[test]
    fn drops_code_and_markup_and_keeps_paragraphs() {
        let (paras, sentences) = split(
            "## Plan\n\nWe use **gix** here.\nIt is fast.\n\n```rust\nlet x = 1;\n```\n- First item. Second part\n1. Numbered",
        );
        assert_eq!(
            paras,
            [
                "Plan",
                "We use gix here. It is fast.",
                "First item. Second part",
                "Numbered"
            ]
        );
        assert_eq!(sentences.len(), 6);
        assert_eq!(sentences[2].text(&paras), "It is fast.");
        assert_eq!(sentences[2].paragraph, 1);
        let forms: Vec<Form> = sentences.iter().map(|s| s.form).collect();
        use Form::*;
        assert_eq!(forms, [Heading, Prose, Prose, Item, Item, Item]);
        let (_, checklist) = split("- [x] Use a cursor instead of re-reading the file.");
        assert_eq!(checklist[0].form, Heading);
    }
}
