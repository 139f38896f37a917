//! Batch input and output: CSV, or NumPy `.npy` (see [`super::npy`]) when a file name ends in
//! `.npy`; CSV otherwise.
//!
//! CSV input: a header of `NAME_lo,NAME_hi` column pairs (any order), one box per row. Cells use
//! the number syntax of expressions (decimal, scientific, hex-float, `inf`, `-inf`) and are
//! rounded outward: a `_lo` cell down, a `_hi` cell up. `empty` in both cells of a pair is the
//! empty set. CSV output: `lo,hi` (or `out1_lo,out1_hi,out2_lo,...`), one row per input row, in
//! order; an empty result is `empty,empty`. An output file (CSV or `.npy`) is written to a
//! temporary file beside it and renamed into place only when complete, so an error never leaves a
//! partial file behind.

use super::npy;
use super::progress::Progress;
use super::Failure;
use ivjit::syntax::number::parse_enclosure;
use ivjit::{Evaluator, Interval, Precision};
use std::io::Write;
use std::path::Path;

/// The boxes read from a CSV file.
pub struct Batch {
    /// Variable names that have columns, in file order.
    pub columns: Vec<String>,
    /// One row per box: the intervals of `columns`, in that order.
    pub(super) rows: Vec<Vec<Interval>>,
}

/// Boxes evaluated per call, so that the progress bar advances on large batches.
const CHUNK: usize = 1 << 20;

/// Reads boxes from `path`: `.npy` by extension, CSV otherwise.
pub fn read(
    path: &Path,
    vars: &[String],
    given: &[(String, Interval)],
    progress: &mut Progress,
) -> Result<Batch, Failure> {
    if npy::is_npy(path) {
        npy::read(path, vars, given, progress)
    } else {
        read_csv(path, vars, given, progress)
    }
}

/// Evaluates boxes in chunks, advancing the progress bar; the results are those of one call.
pub fn evaluate(
    evaluator: &Evaluator,
    boxes: &[Vec<Interval>],
    progress: &mut Progress,
) -> Result<Vec<Vec<Interval>>, ivjit::Error> {
    progress.phase("evaluating", boxes.len() as u64);
    let mut results = Vec::with_capacity(boxes.len());
    for chunk in boxes.chunks(CHUNK) {
        results.extend(evaluator.eval_many(chunk)?);
        progress.set(results.len() as u64);
    }
    Ok(results)
}

/// Writes results to `path` (`.npy` by extension, CSV otherwise) or as CSV to standard output.
pub fn write(
    path: Option<&Path>,
    results: &[Vec<Interval>],
    n_outputs: usize,
    precision: Precision,
    progress: &mut Progress,
) -> Result<(), Failure> {
    progress.phase("writing", results.len() as u64);
    match path {
        Some(p) if npy::is_npy(p) => {
            let bytes = npy::encode(results, n_outputs);
            progress.set(results.len() as u64);
            write_atomic(p, &bytes)
        }
        _ => write_csv(path, results, n_outputs, precision, progress),
    }
}

/// Writes `bytes` to a temporary file beside `p` and renames it into place when complete.
fn write_atomic(p: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let io = |e: std::io::Error| Failure::runtime(format!("cannot write {}: {e}", p.display()));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.persist(p).map_err(|e| io(e.error))?;
    Ok(())
}

impl Batch {
    /// Rows of intervals in the expression's variable order, filling fixed `--var` values.
    pub fn boxes(&self, vars: &[String], given: &[(String, Interval)]) -> Vec<Vec<Interval>> {
        let source: Vec<Result<usize, Interval>> = vars
            .iter()
            .map(|v| match self.columns.iter().position(|c| c == v) {
                Some(i) => Ok(i),
                None => Err(given.iter().find(|(n, _)| n == v).expect("checked").1),
            })
            .collect();
        self.rows
            .iter()
            .map(|row| {
                source
                    .iter()
                    .map(|s| match s {
                        Ok(i) => row[*i],
                        Err(iv) => *iv,
                    })
                    .collect()
            })
            .collect()
    }
}

fn read_csv(
    path: &Path,
    vars: &[String],
    given: &[(String, Interval)],
    progress: &mut Progress,
) -> Result<Batch, Failure> {
    let text = super::read_text(path, "input file")?;
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

fn write_csv(
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
