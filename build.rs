//! Compiles the classifier's pattern sets and the redaction rules' set when the binary is
//! built, so that no process has to: each set's Thompson NFAs (one for each group of its
//! patterns) are written to `$OUT_DIR/<name>.nfa`, in the table form that
//! `src/classify/patterns.rs` reads back ([`patterns::load_groups`]). The patterns are those
//! of `src/classify/cues.rs` and `src/classify/redact/shapes.rs`, compiled by the same
//! function the binary compiles the others with.

use std::path::Path;

use regex_automata::nfa::thompson::{NFA, State};

#[path = "src/classify/cues.rs"]
mod cues;
#[allow(dead_code)]
#[path = "src/classify/patterns.rs"]
mod patterns;
#[allow(dead_code)]
#[path = "src/classify/redact/shapes.rs"]
mod shapes;

/// What `cues.rs` files its groups under; only the patterns are read here.
mod event {
    #[allow(dead_code)]
    pub enum Kind {
        Decision,
        Rejection,
        Tradeoff,
        Discovery,
    }
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/classify/patterns.rs");
    println!("cargo::rerun-if-changed=src/classify/cues.rs");
    println!("cargo::rerun-if-changed=src/classify/redact/shapes.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    for (name, patterns) in cues::prebuilt() {
        write(&out, name, &patterns, patterns::ascii_folded());
    }
    // As `src/classify/redact/rules.rs` makes them (`set_patterns`).
    let redaction: Vec<String> = shapes::shapes()
        .iter()
        .map(|shape| patterns::loosened(&patterns::ascii_boundaries(&shape.pattern)))
        .collect();
    write(&out, "redaction", &redaction, patterns::ascii());
}

/// Compile `patterns` under `syntax` as the binary's sets are compiled, in groups, and write
/// their tables to `<out>/<name>.nfa` as [`patterns::load_groups`] reads them.
fn write<S: AsRef<str>>(
    out: impl AsRef<Path>,
    name: &str,
    patterns: &[S],
    syntax: regex_automata::util::syntax::Config,
) {
    assert!(!patterns.is_empty(), "the set {name} has patterns");
    let nfas = patterns::compile_groups(patterns, syntax);
    let mut bytes = (nfas.len() as u32).to_le_bytes().to_vec();
    for nfa in &nfas {
        let table = table(nfa);
        bytes.extend((table.len() as u32 / 4).to_le_bytes());
        bytes.extend(table);
    }
    let path = out.as_ref().join(format!("{name}.nfa"));
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {path:?}: {e}"));
}

/// `nfa` as [`patterns::load`] reads it.
fn table(nfa: &NFA) -> Vec<u8> {
    use patterns::tag;
    assert!(!nfa.is_utf8(), "the classifier's sets match bytes");
    let id = |s: regex_automata::util::primitives::StateID| s.as_u32();
    let span =
        |t: &regex_automata::nfa::thompson::Transition| u32::from(t.start) | u32::from(t.end) << 8;
    let mut words = vec![
        nfa.states().len() as u32,
        nfa.pattern_len() as u32,
        id(nfa.start_anchored()),
        id(nfa.start_unanchored()),
    ];
    words.extend(nfa.patterns().map(|p| id(nfa.start_pattern(p).unwrap())));
    for state in nfa.states() {
        match state {
            State::ByteRange { trans } => words.extend([tag::RANGE, span(trans), id(trans.next)]),
            State::Sparse(sparse) => {
                words.extend([tag::SPARSE, sparse.transitions.len() as u32]);
                for t in sparse.transitions.iter() {
                    words.extend([span(t), id(t.next)]);
                }
            }
            State::Look { look, next } => words.extend([tag::LOOK, look.as_repr(), id(*next)]),
            State::Union { alternates } => {
                words.extend([tag::UNION, alternates.len() as u32]);
                words.extend(alternates.iter().map(|&a| id(a)));
            }
            State::BinaryUnion { alt1, alt2 } => {
                words.extend([tag::UNION, 2, id(*alt1), id(*alt2)])
            }
            State::Fail => words.push(tag::FAIL),
            State::Match { pattern_id } => words.extend([tag::MATCH, pattern_id.as_u32()]),
            other => panic!("a set's NFA has no {other:?} state"),
        }
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
