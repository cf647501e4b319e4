//! The source's modules point one way: no two modules use each other, directly or through
//! others, and each top-level module uses only those below it in the layers that
//! docs/architecture.md lists. Read from the source text: every `use` and every path that
//! starts at `crate::` or `super::`, outside the tests.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use regex::Regex;

use crate::repo;

/// A module's path from the crate's root: `["store", "graph"]` for `src/store/graph/mod.rs`.
type Module = Vec<String>;

/// Every module of `src/` and the source it is written in.
fn sources() -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for path in repo::files_under(&root) {
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let relative = path.strip_prefix(&root).unwrap().with_extension("");
        let mut module: Module = relative
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        if ["mod", "lib", "main"].contains(&module.last().unwrap().as_str()) {
            module.pop();
        }
        out.insert(module, fs::read_to_string(&path).unwrap());
    }
    out
}

/// The code of a file without its tests and comments.
fn code(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    let comment = Regex::new(r"(?m)//.*$").unwrap();
    comment.replace_all(text, "").into_owned()
}

/// The paths a `use` tree names: `crate::a::{b, c::{d, e as f}}` → `crate::a::b`,
/// `crate::a::c::d`, `crate::a::c::e`.
fn use_paths(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or_default().trim();
        return vec![path.trim_end_matches("::*").to_owned()];
    };
    let prefix = tree[..open].trim().trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    // Split the list at its top-level commas.
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    let mut out = vec![prefix.to_owned()];
    for item in items.into_iter().filter(|i| !i.trim().is_empty()) {
        for path in use_paths(item) {
            if path != "self" {
                out.push(format!("{prefix}::{path}"));
            }
        }
    }
    out
}

/// The modules `module`'s code names, as paths of segments from the crate's root.
fn named(module: &Module, code: &str) -> Vec<Vec<String>> {
    let uses = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);").unwrap();
    let inline = Regex::new(r"\b(?:crate|super)(?:::\w+)+").unwrap();
    let paths = uses
        .captures_iter(code)
        .flat_map(|c| use_paths(&c[1]))
        .chain(inline.find_iter(code).map(|m| m.as_str().to_owned()));
    let mut out = Vec::new();
    for path in paths {
        let mut segments = path.split("::").map(str::trim).peekable();
        let mut at = match segments.peek() {
            Some(&"crate") => {
                segments.next();
                Vec::new()
            }
            Some(&"super") => module.clone(),
            _ => continue,
        };
        while segments.next_if_eq(&"super").is_some() {
            at.pop();
        }
        at.extend(segments.map(str::to_owned));
        if !at.is_empty() {
            out.push(at);
        }
    }
    out
}

/// Module → the modules it uses: for each path, the longest prefix that is a module; a
/// module's own parents and children are left out (a parent declares and re-exports its
/// children, and a child reads its parent's shared items).
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let sources = sources();
    let mut out: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in &sources {
        let uses = out.entry(module.clone()).or_default();
        for path in named(module, &code(text)) {
            let Some(target) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|m| sources.contains_key(m))
            else {
                continue;
            };
            let related = target.starts_with(module) || module.starts_with(&target);
            if !related {
                uses.insert(target);
            }
        }
    }
    out
}

/// The groups of modules that reach each other (Tarjan's strongly connected components),
/// those of more than one module.
fn cycles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'g Module, (usize, usize)>,
        stack: Vec<&'g Module>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g Module) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in &self.graph[v] {
                match self.index.get(w) {
                    None => {
                        self.visit(w);
                        let low = self.index[w].1.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(&(i, _)) if self.stack.contains(&w) => {
                        let low = i.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(_) => {}
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let at = self.stack.iter().rposition(|m| *m == v).unwrap();
                let group: Vec<String> = self.stack.drain(at..).map(|m| m.join("/")).collect();
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

/// The layers docs/architecture.md lists, lowest first: the lines of its block that follows
/// the line `<!-- layers -->`, each a list of top-level modules.
fn documented_layers() -> Vec<Vec<String>> {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let block = doc
        .split("<!-- layers -->")
        .nth(1)
        .expect("docs/architecture.md marks its layers with <!-- layers -->");
    block
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .map(|l| {
            let modules = l.split('#').next().unwrap_or_default();
            modules.split_whitespace().map(str::to_owned).collect()
        })
        .filter(|l: &Vec<String>| !l.is_empty())
        .collect()
}

#[test]
fn no_module_uses_another_that_uses_it() {
    let graph = graph();
    assert!(
        graph.len() > 50,
        "the source was read: {} modules",
        graph.len()
    );
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(edges > 100, "the uses were read: {edges}");
    let found = cycles(&graph);
    assert!(found.is_empty(), "modules that use each other: {found:?}");
}

#[test]
fn the_cycle_check_finds_a_cycle_through_a_use_tree() {
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in [
        (vec!["a".to_owned()], "use crate::{b::{x, y as z}, c};"),
        (vec!["b".to_owned()], "fn f() { crate::c::g() }"),
        (vec!["c".to_owned()], "// crate::a is only a comment\n"),
    ] {
        let uses = named(&module, &code(text))
            .into_iter()
            .map(|p| p[..1].to_vec())
            .collect();
        graph.insert(module, uses);
    }
    assert_eq!(cycles(&graph), Vec::<Vec<String>>::new());
    graph
        .get_mut(&vec!["c".to_owned()])
        .unwrap()
        .insert(vec!["a".to_owned()]);
    let found = cycles(&graph);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].len(), 3, "{found:?}");
}

#[test]
fn each_layer_uses_only_the_layers_below_it() {
    let layers = documented_layers();
    let layer_of: BTreeMap<&str, usize> = (layers.iter().enumerate())
        .flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let graph = graph();
    let top: BTreeSet<&str> = (graph.keys())
        .filter_map(|m| m.first().map(String::as_str))
        .collect();
    let listed: BTreeSet<&str> = layer_of.keys().copied().collect();
    assert_eq!(
        listed, top,
        "docs/architecture.md lists every top-level module"
    );
    let mut wrong = Vec::new();
    for (module, uses) in &graph {
        let Some(from) = module.first() else { continue };
        for used in uses {
            let to = &used[0];
            if to != from && layer_of[to.as_str()] >= layer_of[from.as_str()] {
                wrong.push(format!("{} uses {}", module.join("/"), used.join("/")));
            }
        }
    }
    assert!(wrong.is_empty(), "uses against the layers: {wrong:#?}");
}

#[test]
fn below_the_command_line_no_two_modules_share_a_name() {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for module in sources().keys() {
        if let (Some(last), Some(first)) = (module.last(), module.first())
            && first != "cli"
        {
            by_name
                .entry(last.clone())
                .or_default()
                .push(module.join("/"));
        }
    }
    let shared: Vec<&Vec<String>> = by_name.values().filter(|m| m.len() > 1).collect();
    assert!(shared.is_empty(), "modules of one name: {shared:?}");
}

/// The functions of `text` (outside its tests) longer than `most` lines, as `name (lines)`: a
/// function runs from its `fn` line to the closing brace at the same indentation.
fn long_functions(text: &str, most: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let end = (lines.iter())
        .position(|l| l.trim() == "#[cfg(test)]")
        .unwrap_or(lines.len());
    let start = Regex::new(r"^(\s*)(?:pub(?:\([^)]*\))? )?(?:const )?(?:async )?fn (\w+)").unwrap();
    let mut out = Vec::new();
    let mut i = 0;
    while i < end {
        let Some(c) = start.captures(lines[i]) else {
            i += 1;
            continue;
        };
        let close = format!("{}}}", &c[1]);
        // A declaration without a body (in a trait) ends at its `;`.
        let body = (i..end).find(|&j| lines[j].trim_end().ends_with(['{', ';']));
        match body {
            Some(j) if lines[j].trim_end().ends_with('{') => {
                let last = (j + 1..end).find(|&k| lines[k] == close).unwrap_or(end);
                if last - i + 1 > most {
                    out.push(format!("{} ({} lines)", &c[2], last - i + 1));
                }
                i = last + 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[test]
fn no_function_is_over_a_hundred_lines() {
    let mut long = Vec::new();
    for (module, text) in sources() {
        for f in long_functions(&text, 100) {
            long.push(format!("{}: {f}", module.join("/")));
        }
    }
    assert!(long.is_empty(), "functions over 100 lines: {long:#?}");
    let made_up = "fn short() {\n}\n\nfn long() {\n".to_owned() + &"    x();\n".repeat(100) + "}\n";
    assert_eq!(long_functions(&made_up, 100), ["long (102 lines)"]);
}
