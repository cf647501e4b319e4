//! The heuristic classifier measured against real labelled sentences
//! (`tests/data/classifier-labelled.jsonl`, see `tests/data/README.md`).

use std::collections::BTreeMap;

use git_agent_context::classify::heuristic::classify;
use git_agent_context::event::Kind;

const LABELS: &str = include_str!("../data/classifier-labelled.jsonl");
const KINDS: [&str; 4] = ["decision", "rejection", "tradeoff", "exploration"];

#[derive(Default)]
struct Tally {
    true_pos: usize,
    false_pos: usize,
    false_neg: usize,
}

#[test]
fn precision_and_recall_per_kind_on_real_sentences() {
    let mut tallies: BTreeMap<&str, Tally> = KINDS.iter().map(|k| (*k, Tally::default())).collect();
    let mut rows = 0;
    for line in LABELS.lines().filter(|l| !l.trim().is_empty()) {
        let row: serde_json::Value = serde_json::from_str(line).expect("labelled rows are JSON");
        let text = row["text"].as_str().expect("text");
        let label = row["label"].as_str().expect("label");
        rows += 1;
        let predicted = match classify(text) {
            Some(k @ (Kind::Decision | Kind::Rejection | Kind::Tradeoff | Kind::Exploration)) => {
                Some(k.as_str())
            }
            _ => None,
        };
        if predicted == Some(label) {
            tallies.get_mut(label).unwrap().true_pos += 1;
            continue;
        }
        if let Some(p) = predicted {
            tallies.get_mut(p).unwrap().false_pos += 1;
            if std::env::var_os("CLASSIFIER_VERBOSE").is_some() {
                eprintln!("FP {p:<11} (labelled {label}): {text}");
            }
        }
        if let Some(t) = tallies.get_mut(label) {
            t.false_neg += 1;
            if std::env::var_os("CLASSIFIER_VERBOSE").is_some() {
                eprintln!("FN {label:<11} (got {predicted:?}): {text}");
            }
        }
    }
    assert!(
        rows >= 150,
        "the labelled set has {rows} sentences; at least 150 are required"
    );
    println!("classifier on {rows} labelled sentences:");
    println!(
        "{:<12} {:>9} {:>7} {:>5}",
        "kind", "precision", "recall", "n"
    );
    let mut failures = Vec::new();
    for (kind, t) in &tallies {
        let precision = t.true_pos as f64 / (t.true_pos + t.false_pos).max(1) as f64;
        let recall = t.true_pos as f64 / (t.true_pos + t.false_neg).max(1) as f64;
        println!(
            "{kind:<12} {precision:>9.2} {recall:>7.2} {:>5}",
            t.true_pos + t.false_neg
        );
        if matches!(*kind, "decision" | "rejection") && precision < 0.80 {
            failures.push(format!("{kind} precision {precision:.2} < 0.80"));
        }
        // Floors a little under the figures the README reports, so that they stay true.
        let floor = match *kind {
            "exploration" => 0.75,
            "tradeoff" => 0.45,
            _ => 0.55,
        };
        if recall < floor {
            failures.push(format!("{kind} recall {recall:.2} < {floor:.2}"));
        }
        // A family that never fires would pass a precision bar trivially.
        assert!(t.true_pos > 0, "{kind}: no sentence recognised");
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}
