//! Batch input and output: CSV ([`csv`]), or NumPy `.npy` ([`npy`]) when a file name ends in
//! `.npy`. This module holds what both share: the boxes read ([`Batch`]), chunked evaluation
//! with progress, and atomic writing.
//!
//! CSV input: a header of `NAME_lo,NAME_hi` column pairs (any order), one box per row. Cells use
//! the number syntax of expressions (decimal, scientific, hex-float, `inf`, `-inf`) and are
//! rounded outward: a `_lo` cell down, a `_hi` cell up. `empty` in both cells of a pair is the
//! empty set. CSV output: `lo,hi` (or `out1_lo,out1_hi,out2_lo,...`), one row per input row, in
//! order; an empty result is `empty,empty`; with `--gradient`, `d_NAME_lo,d_NAME_hi` pairs follow
//! each output (`undefined,undefined` where a jump may lie in the box). With `--decorations`,
//! a CSV input may have a `NAME_dec` column (a decoration's name, `com`, ..., or its code, 16,
//! ...; a variable without one is decorated from its bounds), and each output's pair is followed
//! by its decoration (`dec` or `outK_dec`: its name in CSV, its code in a `.npy` column; NaI is
//! `empty,empty,ill`). Output files are
//! written by [`super::output`] (atomically for regular files, through for devices and FIFOs,
//! `-` for standard output).

mod csv;
mod npy;

use super::progress::Progress;
use super::Failure;
use ivjit::{Evaluator, Interval, Precision};
use std::path::Path;

/// The boxes read from a batch file, by column: for each variable with columns (file order),
/// its lower bounds and its upper bounds, one value per row (NaN, NaN: the empty set).
pub struct Batch {
    /// Variable names that have columns, in file order.
    pub columns: Vec<String>,
    /// `bounds[2 k]` and `bounds[2 k + 1]`: the lower and upper bounds of column k.
    pub(crate) bounds: Vec<Vec<f64>>,
    /// Per column, its decorations' codes where the file has a `NAME_dec` column.
    pub(crate) decorations: Vec<Option<Vec<f64>>>,
    /// Rows (boxes).
    pub n: usize,
}

/// A vector for `len` values that a size from the user's input sets, or a failure that says
/// how much memory it needed: such a size must never abort the process (issue 30).
pub(crate) fn vec_for<T: Clone>(len: usize, fill: T, what: &str) -> Result<Vec<T>, Failure> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Failure::runtime(format!(
            "not enough memory for {what} ({} bytes); use a smaller batch",
            len.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    v.resize(len, fill);
    Ok(v)
}

/// An empty vector with room for `len` values (see [`vec_for`]).
pub(crate) fn room_for<T>(len: usize, what: &str) -> Result<Vec<T>, Failure> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Failure::runtime(format!(
            "not enough memory for {what} ({} bytes); use a smaller batch",
            len.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    Ok(v)
}

/// One interval column pair of the output: `NAME_lo,NAME_hi` in CSV (`lo,hi` when the name is
/// empty), two columns of a `.npy` file. Its cells are output `index` of the evaluation,
/// written as undefined (CSV `undefined`, `.npy` NaN) where output `flag` is not exactly
/// [1, 1] (a partial derivative where a jump may lie in the box).
pub struct Column {
    pub name: String,
    pub index: usize,
    pub flag: Option<usize>,
    /// A decoration: output `index` holds its code (one column `NAME_dec`).
    pub decoration: bool,
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
                decoration: false,
            })
            .collect()
    }

    /// The columns of a decorated program's outputs: each output's pair, then its
    /// decoration (`dec`, or `outK_dec`), whose code is output `n_outputs + k`.
    pub fn decorated(n_outputs: usize) -> Vec<Column> {
        let mut cols = Vec::new();
        for c in Column::outputs(n_outputs) {
            let name = if c.name.is_empty() {
                "dec".to_string()
            } else {
                format!("{}_dec", c.name)
            };
            let index = n_outputs + c.index;
            cols.push(c);
            cols.push(Column {
                name,
                index,
                flag: None,
                decoration: true,
            });
        }
        cols
    }

    /// The decoration of row `i` (a decoration column's cell).
    fn decoration_of(&self, out: &[f64], n: usize, i: usize) -> ivjit::Decoration {
        ivjit::Decoration::at_most(out[2 * self.index * n + i])
    }

    /// The columns of a gradient's batch (`ivjit::internals::ir::diff::Gradient`'s layout): per output its
    /// value, then `d_NAME` per variable (prefixed `outK_` for several outputs).
    pub fn gradient(at: ivjit::internals::ir::diff::Gradient, vars: &[String]) -> Vec<Column> {
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
                    decoration: false,
                });
            }
        }
        cols
    }

    /// The cell of row `i` of structure-of-arrays results `out` (`n` rows): `None` where
    /// undefined.
    fn cell(&self, out: &[f64], n: usize, i: usize) -> Option<Interval> {
        let at = |k: usize| (out[2 * k * n + i], out[(2 * k + 1) * n + i]);
        let defined = self.flag.is_none_or(|f| at(f) == (1.0, 1.0));
        defined.then(|| {
            let (lo, hi) = at(self.index);
            Interval { lo, hi }
        })
    }
}

/// Boxes evaluated per call, so that the progress bar advances on large batches.
const CHUNK: usize = 1 << 20;

/// Reads boxes from `path`: `.npy` by extension, CSV otherwise.
pub fn read(
    path: &Path,
    vars: &[String],
    given: &[(String, Interval)],
    decorations: bool,
    progress: &mut Progress,
) -> Result<Batch, Failure> {
    if npy::is_npy(path) {
        npy::read(path, vars, given, decorations, progress)
    } else {
        csv::read(path, vars, given, decorations, progress)
    }
}

impl Batch {
    /// The evaluator's structure-of-arrays input: per variable of `vars` (the expression's
    /// order) its lower bounds, then its upper bounds, from the file's columns or, for the
    /// variables given with `--var`, that value in every row.
    pub fn soa(&self, vars: &[String], given: &[(String, Interval)]) -> Result<Vec<f64>, Failure> {
        let n = self.n;
        let mut out = room_for::<f64>(2 * vars.len() * n, "the batch's inputs")?;
        let col: std::collections::HashMap<&str, usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(k, c)| (c.as_str(), k))
            .collect();
        let fixed: std::collections::HashMap<&str, Interval> =
            given.iter().map(|(n, iv)| (n.as_str(), *iv)).collect();
        for v in vars {
            match col.get(v.as_str()) {
                Some(&k) => {
                    out.extend_from_slice(&self.bounds[2 * k]);
                    out.extend_from_slice(&self.bounds[2 * k + 1]);
                }
                None => {
                    let iv = fixed[v.as_str()];
                    out.extend(std::iter::repeat_n(iv.lo, n));
                    out.extend(std::iter::repeat_n(iv.hi, n));
                }
            }
        }
        Ok(out)
    }

    /// Whether a column gives decorations (the program then takes one input per variable).
    pub fn has_decorations(&self) -> bool {
        self.decorations.iter().any(Option::is_some)
    }

    /// [`Batch::soa`] followed by each variable's decoration input (`DecorationInputs::Given`):
    /// its `NAME_dec` column, the one given with `--var`, or `com` (lowered to what the box
    /// may carry by the program).
    pub fn soa_decorated(
        &self,
        vars: &[String],
        given: &[(String, Interval)],
        given_decorations: &[(String, ivjit::Decoration)],
    ) -> Result<Vec<f64>, Failure> {
        let n = self.n;
        let mut out = self.soa(vars, given)?;
        out.try_reserve_exact(2 * vars.len() * n).map_err(|_| {
            Failure::runtime("not enough memory for the batch's decorations; use a smaller batch")
        })?;
        for v in vars {
            let column = self
                .columns
                .iter()
                .position(|c| c == v)
                .and_then(|k| self.decorations[k].as_ref());
            match column {
                Some(codes) => {
                    out.extend_from_slice(codes);
                    out.extend_from_slice(codes);
                }
                None => {
                    let d = given_decorations
                        .iter()
                        .find(|(n, _)| n == v)
                        .map_or(ivjit::Decoration::Com, |(_, d)| *d);
                    out.extend(std::iter::repeat_n(f64::from(d.code()), 2 * n));
                }
            }
        }
        Ok(out)
    }
}

/// Evaluates `n` boxes of structure-of-arrays `inputs` in chunks, advancing the progress bar;
/// the results (structure of arrays, `2 * n_outputs * n`) are those of one call.
pub fn evaluate(
    evaluator: &Evaluator,
    inputs: &[f64],
    n: usize,
    progress: &mut Progress,
    text: &str,
) -> Result<Vec<f64>, Failure> {
    progress.phase("evaluating", n as u64);
    let n_vars = inputs.len() / n.max(1);
    let n_out = evaluator.program().outputs.len();
    let mut out = vec_for(2 * n_out * n, 0.0, "the batch's results")?;
    if n <= CHUNK {
        evaluator
            .eval_soa_into(inputs, n, &mut out)
            .map_err(|e| super::failure(e, text))?;
        progress.set(n as u64);
        return Ok(out);
    }
    let mut chunk_in = vec_for(n_vars * CHUNK, 0.0, "a chunk of the batch")?;
    let mut chunk_out = vec_for(2 * n_out * CHUNK, 0.0, "a chunk of the results")?;
    let mut start = 0;
    while start < n {
        let m = CHUNK.min(n - start);
        for a in 0..n_vars {
            chunk_in[a * m..(a + 1) * m].copy_from_slice(&inputs[a * n + start..a * n + start + m]);
        }
        evaluator
            .eval_soa_into(&chunk_in[..n_vars * m], m, &mut chunk_out[..2 * n_out * m])
            .map_err(|e| super::failure(e, text))?;
        for a in 0..2 * n_out {
            out[a * n + start..a * n + start + m].copy_from_slice(&chunk_out[a * m..(a + 1) * m]);
        }
        start += m;
        progress.set(start as u64);
    }
    Ok(out)
}

/// Writes results (structure of arrays, `n` rows) to `path` (`.npy` by extension, CSV
/// otherwise) or as CSV to standard output.
pub fn write(
    path: Option<&Path>,
    results: &[f64],
    n: usize,
    columns: &[Column],
    precision: Precision,
    progress: &mut Progress,
) -> Result<(), Failure> {
    progress.phase("writing", n as u64);
    match path {
        Some(p) if npy::is_npy(p) => {
            let bytes = npy::encode(results, n, columns)?;
            progress.set(n as u64);
            super::output::write(p, &bytes)
        }
        _ => csv::write(path, results, n, columns, precision, progress),
    }
}
