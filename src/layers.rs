//! The layer test: every `crate::` path in the library's sources names a module of a lower
//! layer than its own, by the table of `docs/architecture.md` (the table is this test's data).
//! So the modules' imports form no cycle, and the map stays true to the code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The layer of each module, from the rows between `<!-- layers -->` and `<!-- /layers -->`
/// of docs/architecture.md: `| N | `a`, `b` | what |`.
fn layers() -> BTreeMap<String, usize> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).expect("the map");
    let start = doc
        .find("<!-- layers -->")
        .expect("the layer table's start marker");
    let end = doc
        .find("<!-- /layers -->")
        .expect("the layer table's end marker");
    let mut out = BTreeMap::new();
    for line in doc[start..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<usize>().ok()) else {
            continue;
        };
        for module in cells[2].split(',') {
            let name = module.trim().trim_matches('`').to_string();
            assert!(
                out.insert(name.clone(), layer).is_none(),
                "{name} listed twice"
            );
        }
    }
    out
}

/// The crate root's re-exports (`pub use module::{A, B}`): a path `crate::A` names `module`.
fn reexports() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs");
    let mut out = BTreeMap::new();
    for line in lib.lines().filter(|l| l.starts_with("pub use ")) {
        let rest = line.trim_start_matches("pub use ").trim_end_matches(';');
        let (module, names) = rest.split_once("::").expect("pub use module::...");
        for name in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            out.insert(name.trim().to_string(), module.to_string());
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module names a source's `crate::` paths refer to, without comments and unit tests.
fn referred(text: &str, reexports: &BTreeMap<String, String>) -> Vec<String> {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let name = |s: &str| {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group.split(',').map(|p| name(p.trim())).collect()
        } else {
            vec![name(rest)]
        };
        for n in names.into_iter().filter(|n| !n.is_empty()) {
            out.push(reexports.get(&n).cloned().unwrap_or(n));
        }
    }
    out
}

#[test]
fn every_import_goes_down_the_layers_of_the_map() {
    let layers = layers();
    let reexports = reexports();
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut modules = std::collections::BTreeSet::new();
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a path");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // The facade, the binary (main.rs, cli/, workloads.rs) and unit-test files are not
        // layers of the library.
        if ["lib", "main", "cli", "workloads", "layers"].contains(&module.as_str())
            || rel.ends_with("tests.rs")
        {
            continue;
        }
        modules.insert(module.clone());
        let Some(&own) = layers.get(&module) else {
            wrong.push(format!(
                "{}: module {module} is not in the map's table",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("a source");
        for target in referred(&text, &reexports) {
            if target == module || target == "workloads" {
                continue;
            }
            match layers.get(&target) {
                Some(&l) if l < own => {}
                Some(&l) => wrong.push(format!(
                    "{}: crate::{target} (layer {l}) from {module} (layer {own})",
                    rel.display()
                )),
                None => {}
            }
        }
    }
    for listed in layers.keys() {
        if !modules.contains(listed) {
            wrong.push(format!("the map lists {listed}, which src/ does not have"));
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports against docs/architecture.md's layers:\n{}",
        wrong.join("\n")
    );
}
