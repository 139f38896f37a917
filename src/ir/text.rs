//! The readable text form of the IR (`ivjit ir`), used in snapshots.

use super::{Graph, Op};
use crate::ir::sign::Facts;
use std::fmt::Write;

/// Prints the live nodes, one per line, with the sign facts the lowering will use.
pub fn to_text(g: &Graph) -> String {
    let facts = Facts::analyze(g);
    let live = g.live();
    // Live nodes are numbered densely, so that dropping a dead node does not renumber the text.
    let mut number = vec![0usize; g.len()];
    let mut next = 0;
    for id in g.ids() {
        if live[id.index()] {
            number[id.index()] = next;
            next += 1;
        }
    }
    let name = |id: crate::ir::NodeId| format!("%{}", number[id.index()]);
    let mut s = String::new();
    let _ = writeln!(s, "vars: {}", g.vars.join(", "));
    for id in g.ids() {
        if !live[id.index()] {
            continue;
        }
        let op = g.op(id);
        let _ = write!(s, "{} = {}", name(id), op.name());
        match op {
            Op::Var(v) => {
                let _ = write!(s, " {}", g.vars[v as usize]);
            }
            Op::Const(c) => {
                let _ = write!(s, " {c}");
            }
            Op::DecoratedConst(c, d) => {
                let _ = write!(s, " {c}_{d}");
            }
            Op::Pown(a, n) | Op::Rootn(a, n) => {
                let _ = write!(s, " {}, {n}", name(a));
            }
            _ => {
                let args: Vec<String> = op.args().iter().map(|&a| name(a)).collect();
                let _ = write!(s, " {}", args.join(", "));
            }
        }
        let f = facts.get(id);
        let tag = f.describe();
        if !tag.is_empty() && !matches!(op, Op::Const(_)) {
            let _ = write!(s, "    ; {tag}");
        }
        s.push('\n');
    }
    for (k, o) in g.outputs.iter().enumerate() {
        let _ = writeln!(s, "out{k} = {}", name(*o));
    }
    s
}
