//! Words for the keyword index: how event text and prompts become terms, and BM25 over them.
//!
//! Terms are lowercase ASCII words of two or more characters, English function words left
//! out, lightly stemmed (`caches`, `caching`, `cached` → `cach`). Identifiers count as
//! themselves and as their parts: `parse_range` gives `parse_range`, `pars`, `rang`;
//! `TtlCache` gives `ttlcache`, `ttl`, `cach`.

use crate::event::Event;

/// BM25's usual parameters.
const K1: f64 = 1.2;
const B: f64 = 0.75;

const STOP: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "but", "by", "can", "could", "did", "do",
    "does", "doing", "done", "for", "from", "had", "has", "have", "having", "he", "her", "here",
    "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "like", "me",
    "more", "most", "my", "no", "not", "now", "of", "on", "once", "only", "or", "other", "our",
    "out", "over", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
    "up", "use", "used", "using", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "why", "will", "with", "would", "you", "your",
];

/// The terms of `text`, in order, repeats kept.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.is_empty() {
            continue;
        }
        let parts = split_identifier(word);
        if parts.len() > 1 {
            // The identifier itself, unstemmed.
            out.push(word.to_ascii_lowercase());
        }
        for part in parts {
            push(&mut out, &part.to_ascii_lowercase());
        }
    }
    out
}

/// The code identifiers of `text` (`parse_range`, `TtlCache`), as [`terms`] gives them whole:
/// a prose word says little about which code it means, an identifier names it.
pub fn identifiers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| split_identifier(word).len() > 1 && !plural_acronym(word))
        .map(str::to_ascii_lowercase)
        .collect()
}

/// `PRs`, `IDs`, `APIs`: an acronym's plural, which [`split_identifier`] cuts in two like
/// `HTTPServer`, is a word of prose, not a name in the code.
fn plural_acronym(word: &str) -> bool {
    word.strip_suffix('s').is_some_and(|acronym| {
        acronym.len() >= 2 && acronym.bytes().all(|b| b.is_ascii_uppercase())
    })
}

fn push(out: &mut Vec<String>, word: &str) {
    if word.len() < 2 || STOP.contains(&word) || word.bytes().all(|b| b.is_ascii_digit()) {
        return;
    }
    out.push(stem(word).to_owned());
}

/// `parse_range` → `parse`, `range`; `TtlCache` → `Ttl`, `Cache`; `HTTPServer` → `HTTP`,
/// `Server`.
fn split_identifier(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let b = piece.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            let lower_to_upper = b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase();
            let acronym_end = i + 1 < b.len()
                && b[i - 1].is_ascii_uppercase()
                && b[i].is_ascii_uppercase()
                && b[i + 1].is_ascii_lowercase();
            if lower_to_upper || acronym_end {
                parts.push(&piece[start..i]);
                start = i;
            }
        }
        parts.push(&piece[start..]);
    }
    parts
}

/// A light suffix stripper: enough that plurals and verb forms meet.
fn stem(word: &str) -> &str {
    for suffix in [
        "ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s", "e",
    ] {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.len() >= 3
            && !(suffix == "s" && stem.ends_with('s'))
        {
            return stem;
        }
    }
    word
}

/// The text of an event that the keyword index covers: its summary (twice: it is what the
/// event is about), rationale, the alternatives it names and the prompt it answered.
pub fn event_terms(e: &Event) -> Vec<String> {
    let mut all = terms(&e.summary);
    all.extend(terms(&e.summary));
    all.extend(terms(&e.rationale));
    for alt in &e.alternatives {
        all.extend(terms(alt));
    }
    all.extend(terms(&e.prompt_context));
    all
}

/// The BM25 weight of a term found `tf` times in a document of `len` terms, among `docs`
/// documents averaging `average` terms, `df` of which contain it.
pub fn bm25(tf: u32, len: u32, df: usize, docs: u64, average: f64) -> f64 {
    let docs = docs.max(1) as f64;
    let df = df as f64;
    let idf = ((docs - df + 0.5) / (df + 0.5) + 1.0).ln();
    let tf = f64::from(tf);
    let norm = 1.0 - B + B * f64::from(len) / average.max(1.0);
    idf * tf * (K1 + 1.0) / (tf + K1 * norm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_identifiers_and_stems() {
        assert_eq!(
            terms("Use a TTL cache for parse_range, not the HTTPServer"),
            [
                "ttl",
                "cach",
                "parse_range",
                "pars",
                "rang",
                "httpserver",
                "http",
                "server"
            ]
        );
        assert_eq!(terms("caches caching cached"), ["cach", "cach", "cach"]);
        assert_eq!(
            identifiers("Use a TTL cache for parse_range, not the HTTPServer or HTTP"),
            ["parse_range", "httpserver"]
        );
        assert_eq!(terms("the 42 of it"), Vec::<String>::new());
        // A prompt about stacked PRs or IDs names no code.
        assert_eq!(
            identifiers("stacked PRs, the IDs and APIs, getIDs, IDsByName, HTTPs_cache"),
            ["getids", "idsbyname", "https_cache"]
        );
    }

    #[test]
    fn bm25_prefers_rare_terms_and_short_documents() {
        let rare = bm25(1, 10, 1, 100, 10.0);
        let common = bm25(1, 10, 50, 100, 10.0);
        assert!(rare > common);
        assert!(bm25(1, 5, 1, 100, 10.0) > bm25(1, 40, 1, 100, 10.0));
        assert!(bm25(3, 10, 1, 100, 10.0) > bm25(1, 10, 1, 100, 10.0));
    }
}
