//! Batch input and output: CSV ([`csv`]), or NumPy `.npy` ([`npy`]) when a file name ends in
//! `.npy`. This module holds what both share: the boxes read ([`Batch`]), chunked evaluation
//! with progress, and atomic writing.
//!
//! CSV input: a header of `NAME_lo,NAME_hi` column pairs (any order), one box per row. Cells use
//! the number syntax of expressions (decimal, scientific, hex-float, `inf`, `-inf`) and are
//! rounded outward: a `_lo` cell down, a `_hi` cell up. `empty` in both cells of a pair is the
//! empty set. CSV output: `lo,hi` (or `out1_lo,out1_hi,out2_lo,...`), one row per input row, in
//! order; an empty result is `empty,empty`; with `--gradient`, `d_NAME_lo,d_NAME_hi` pairs follow
//! each output (`undefined,undefined` where a jump may lie in the box). Output files are
//! written by [`super::output`] (atomically for regular files, through for devices and FIFOs,
//! `-` for standard output).

mod csv;
mod npy;

use super::progress::Progress;
use super::Failure;
use ivjit::{Evaluator, Interval, Precision};
use std::path::Path;

/// The boxes read from a CSV file.
pub struct Batch {
    /// Variable names that have columns, in file order.
    pub columns: Vec<String>,
    /// One row per box: the intervals of `columns`, in that order.
    pub(crate) rows: Vec<Vec<Interval>>,
}

/// One interval column pair of the output: `NAME_lo,NAME_hi` in CSV (`lo,hi` when the name is
/// empty), two columns of a `.npy` file. Its cells are `results[row][index]`, written as
/// undefined (CSV `undefined`, `.npy` NaN) where the flag `results[row][flag]` is not exactly
/// [1, 1] (a partial derivative where a jump may lie in the box).
pub struct Column {
    pub name: String,
    pub index: usize,
    pub flag: Option<usize>,
}

impl Column {
    /// The columns of an expression's outputs: `lo,hi` for one, `out1_lo,out1_hi,...` for
    /// several.
    pub fn outputs(n_outputs: usize) -> Vec<Column> {
        (0..n_outputs)
            .map(|k| Column {
                name: if n_outputs == 1 {
                    String::new()
                } else {
                    format!("out{}", k + 1)
                },
                index: k,
                flag: None,
            })
            .collect()
    }

    /// The columns of a gradient's batch (`ivjit::ir::diff::Gradient`'s layout): per output its
    /// value, then `d_NAME` per variable (prefixed `outK_` for several outputs).
    pub fn gradient(at: ivjit::ir::diff::Gradient, vars: &[String]) -> Vec<Column> {
        let mut cols = Vec::new();
        for (j, value) in Column::outputs(at.outputs).into_iter().enumerate() {
            let prefix = if value.name.is_empty() {
                String::new()
            } else {
                format!("{}_", value.name)
            };
            cols.push(Column {
                index: at.value(j),
                ..value
            });
            for (v, name) in vars.iter().enumerate() {
                cols.push(Column {
                    name: format!("{prefix}d_{name}"),
                    index: at.partial(j, v),
                    flag: Some(at.defined(j)),
                });
            }
        }
        cols
    }

    /// The cell of `row`: `None` where undefined.
    fn cell(&self, row: &[Interval]) -> Option<Interval> {
        let defined = self
            .flag
            .is_none_or(|f| row[f].lo == 1.0 && row[f].hi == 1.0);
        defined.then_some(row[self.index])
    }
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
        csv::read(path, vars, given, progress)
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
    columns: &[Column],
    precision: Precision,
    progress: &mut Progress,
) -> Result<(), Failure> {
    progress.phase("writing", results.len() as u64);
    match path {
        Some(p) if npy::is_npy(p) => {
            let bytes = npy::encode(results, columns)
                .map_err(|e| Failure::runtime(format!("cannot encode {}: {e}", p.display())))?;
            progress.set(results.len() as u64);
            super::output::write(p, &bytes)
        }
        _ => csv::write(path, results, columns, precision, progress),
    }
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
