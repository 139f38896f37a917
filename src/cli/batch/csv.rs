//! CSV batches (see the parent module for the format): a header of `NAME_lo,NAME_hi` column
//! pairs, one box per row; results as `lo,hi` (or `out1_lo,out1_hi,...`) rows.

use super::{write_atomic, Batch};
use crate::cli::progress::Progress;
use crate::cli::Failure;
use ivjit::syntax::number::parse_enclosure;
use ivjit::{Interval, Precision};
use std::path::Path;

pub(super) fn read(
    path: &Path,
    vars: &[String],
    given: &[(String, Interval)],
    progress: &mut Progress,
) -> Result<Batch, Failure> {
    let text = crate::cli::read_text(path, "input file")?;
    let file = path.display();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(Failure::input(format!(
            "{file} is empty: expected a header such as x_lo,x_hi"
        )));
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    // Pair up NAME_lo / NAME_hi columns.
    let mut columns: Vec<String> = Vec::new();
    let mut lo_col: Vec<usize> = Vec::new();
    let mut hi_col: Vec<usize> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let (var, is_lo) = if let Some(v) = n.strip_suffix("_lo") {
            (v, true)
        } else if let Some(v) = n.strip_suffix("_hi") {
            (v, false)
        } else {
            return Err(Failure::input(format!(
                "{file}, header, column {} '{n}': column names must be NAME_lo or NAME_hi",
                i + 1
            )));
        };
        let k = match columns.iter().position(|c| c == var) {
            Some(k) => k,
            None => {
                columns.push(var.to_string());
                lo_col.push(usize::MAX);
                hi_col.push(usize::MAX);
                columns.len() - 1
            }
        };
        let slot = if is_lo {
            &mut lo_col[k]
        } else {
            &mut hi_col[k]
        };
        if *slot != usize::MAX {
            return Err(Failure::input(format!(
                "{file}, header: column '{n}' appears twice"
            )));
        }
        *slot = i;
    }
    for (k, c) in columns.iter().enumerate() {
        if lo_col[k] == usize::MAX || hi_col[k] == usize::MAX {
            let missing = if lo_col[k] == usize::MAX { "lo" } else { "hi" };
            return Err(Failure::input(format!(
                "{file}, header: '{c}' has no {c}_{missing} column"
            )));
        }
        if !vars.iter().any(|v| v == c) {
            return Err(Failure::input(format!(
                "{file}, header: the expression has no variable '{c}' (its variables: {})",
                vars.join(", ")
            )));
        }
        if given.iter().any(|(n, _)| n == c) {
            return Err(Failure::input(format!(
                "'{c}' is given both by --var and by {file}; give it once"
            )));
        }
    }
    let mut rows = Vec::new();
    progress.phase(
        "reading",
        text.bytes().filter(|&b| b == b'\n').count() as u64,
    );
    for (row_no, (line_no, line)) in lines.enumerate() {
        if row_no % 65536 == 0 {
            progress.set(line_no as u64);
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let at = |col: usize| {
            format!(
                "{file}, row {} (line {}), column {}",
                row_no + 1,
                line_no + 1,
                names.get(col).copied().unwrap_or("?")
            )
        };
        if cells.len() != names.len() {
            return Err(Failure::input(format!(
                "{file}, row {} (line {}): {} cells, but the header has {} columns",
                row_no + 1,
                line_no + 1,
                cells.len(),
                names.len()
            )));
        }
        let mut row = Vec::with_capacity(columns.len());
        for k in 0..columns.len() {
            let (lc, hc) = (lo_col[k], hi_col[k]);
            let (l, h) = (cells[lc], cells[hc]);
            let empty = |s: &str| s.eq_ignore_ascii_case("empty");
            if empty(l) || empty(h) {
                if !(empty(l) && empty(h)) {
                    let col = if empty(l) { hc } else { lc };
                    return Err(Failure::input(format!(
                        "{}: 'empty' must be in both cells of the pair",
                        at(col)
                    )));
                }
                row.push(Interval::EMPTY);
                continue;
            }
            let lo = parse_enclosure(l)
                .map_err(|e| Failure::input(format!("{}: '{l}' is not a number: {e}", at(lc))))?
                .lo;
            let hi = parse_enclosure(h)
                .map_err(|e| Failure::input(format!("{}: '{h}' is not a number: {e}", at(hc))))?
                .hi;
            let iv =
                Interval::new(lo, hi).map_err(|e| Failure::input(format!("{}: {e}", at(lc))))?;
            row.push(iv);
        }
        rows.push(row);
    }
    Ok(Batch { columns, rows })
}

pub(super) fn write(
    path: Option<&Path>,
    results: &[Vec<Interval>],
    n_outputs: usize,
    precision: Precision,
    progress: &mut Progress,
) -> Result<(), Failure> {
    let mut text = String::new();
    if n_outputs == 1 {
        text.push_str("lo,hi\n");
    } else {
        let cols: Vec<String> = (1..=n_outputs)
            .map(|k| format!("out{k}_lo,out{k}_hi"))
            .collect();
        text.push_str(&cols.join(","));
        text.push('\n');
    }
    for (i, row) in results.iter().enumerate() {
        if i % 65536 == 0 {
            progress.set(i as u64);
        }
        let cells: Vec<String> = row
            .iter()
            .map(|iv| {
                if iv.is_empty() {
                    "empty,empty".to_string()
                } else {
                    format!(
                        "{},{}",
                        Interval::format_bound(iv.lo, precision),
                        Interval::format_bound(iv.hi, precision)
                    )
                }
            })
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    match path {
        None => {
            print!("{text}");
            Ok(())
        }
        Some(p) => write_atomic(p, text.as_bytes()),
    }
}
