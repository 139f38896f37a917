//! The layer test: every `crate::` path in the library's sources names a module of a lower
//! layer than its own, by the table of `docs/architecture.md` (the table is this test's data).
//! So the modules' imports form no cycle, and the map stays true to the code. A second test
//! looks inside each module folder: its files' imports of each other form no cycle either.

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

/// The re-exports of a module's file (`pub use module::{A, B};` or `pub(crate) use
/// module::A;`, over one line or several): name → the submodule that defines it.
fn reexports_in(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (i, _) in text.match_indices("use ") {
        let before = &text[..i];
        let line_start = before.rfind('\n').map_or(0, |k| k + 1);
        if !before[line_start..].trim_start().starts_with("pub") {
            continue;
        }
        let rest = &text[i + "use ".len()..];
        let item = &rest[..rest.find(';').unwrap_or(rest.len())];
        let Some((module, names)) = item.split_once("::") else {
            continue;
        };
        if ["crate", "super", "self", "std"].contains(&module) {
            continue;
        }
        for name in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            // `a::B` names B; `detect as detect_gpu` names detect_gpu.
            let name = name.split("::").last().unwrap_or("");
            let name = name.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    out
}

/// The crate root's re-exports: a path `crate::A` names the module that defines `A`.
fn reexports() -> BTreeMap<String, String> {
    reexports_in(&std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs"))
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

/// A source without its comments and its unit tests.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names that follow `prefix` in `code` (`prefix::A`, or each of `prefix::{A, B::c}`).
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let name = |s: &str| {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // `a::super::`, `xcrate::`: not this prefix
        }
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|p| name(p.trim())));
        } else {
            out.push(name(rest));
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// The module names a source's `crate::` paths refer to, without comments and unit tests.
fn referred(text: &str, reexports: &BTreeMap<String, String>) -> Vec<String> {
    let code = code_of(text);
    let mut out = Vec::new();
    for n in names_after(&code, "crate::") {
        out.push(reexports.get(&n).cloned().unwrap_or(n));
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

/// The sibling files of each module folder (`src/<m>/`, and folders below it with a `mod.rs`)
/// import each other without a cycle: a file refers to a sibling by `super::b`, by
/// `crate::<m>::b`, or by a name that the folder's `mod.rs` re-exports from `b`. A cycle would
/// mean the files are one unit split arbitrarily (the `gpu/` circle of 13 files before the
/// environment, loading and in-process memo were given files of their own).
#[test]
fn the_files_of_a_module_import_each_other_without_a_cycle() {
    let mut folders = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                if path.join("mod.rs").exists() {
                    out.push(path.clone());
                }
                walk(&path, out);
            }
        }
    }
    walk(&root().join("src"), &mut folders);
    let mut cycles = Vec::new();
    for folder in folders {
        let rel = folder.strip_prefix(root().join("src")).expect("under src");
        let crate_path = format!("crate::{}::", rel.to_string_lossy().replace('/', "::"));
        let mod_text = std::fs::read_to_string(folder.join("mod.rs")).expect("mod.rs");
        let reexports = reexports_in(&code_of(&mod_text));
        // Sibling modules: files other than mod.rs, and sub-folders with a mod.rs.
        let mut siblings = BTreeMap::new();
        for entry in std::fs::read_dir(&folder).expect("a folder") {
            let path = entry.expect("an entry").path();
            let name = path
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .to_string();
            let source = if path.is_dir() {
                path.join("mod.rs")
            } else if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
                path.clone()
            } else {
                continue;
            };
            if source.exists() {
                siblings.insert(name, source);
            }
        }
        let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, source) in &siblings {
            let code = code_of(&std::fs::read_to_string(source).expect("a source"));
            let mut to: Vec<String> = names_after(&code, "super::")
                .into_iter()
                .chain(names_after(&code, &crate_path))
                .filter_map(|n| {
                    if siblings.contains_key(&n) {
                        Some(n)
                    } else {
                        reexports.get(&n).cloned()
                    }
                })
                .filter(|n| n != name && siblings.contains_key(n))
                .collect();
            to.sort();
            to.dedup();
            edges.insert(name.clone(), to);
        }
        // Depth-first search for a back edge.
        fn visit(
            n: &str,
            edges: &BTreeMap<String, Vec<String>>,
            state: &mut BTreeMap<String, u8>,
            path: &mut Vec<String>,
            found: &mut Option<Vec<String>>,
        ) {
            state.insert(n.to_string(), 1);
            path.push(n.to_string());
            for m in &edges[n] {
                match state.get(m.as_str()).copied().unwrap_or(0) {
                    0 => visit(m, edges, state, path, found),
                    1 if found.is_none() => {
                        let at = path.iter().position(|p| p == m).expect("on the path");
                        let mut cycle = path[at..].to_vec();
                        cycle.push(m.clone());
                        *found = Some(cycle);
                    }
                    _ => {}
                }
            }
            path.pop();
            state.insert(n.to_string(), 2);
        }
        let mut state = BTreeMap::new();
        for n in edges.keys() {
            let mut found = None;
            if !state.contains_key(n) {
                visit(n, &edges, &mut state, &mut Vec::new(), &mut found);
            }
            if let Some(cycle) = found {
                cycles.push(format!("src/{}: {}", rel.display(), cycle.join(" -> ")));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other in a circle:\n{}",
        cycles.join("\n")
    );
}
