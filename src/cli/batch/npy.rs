//! Batch input and output as NumPy `.npy` files (format versions 1.0, 2.0 and 3.0 read; 1.0
//! written).
//!
//! Input: a 2-D array, little-endian float64 (`<f8`) or float32 (`<f4`), C order, of shape
//! `(n_boxes, 2 * n_columns)`. Its columns are the lower and upper bounds of the expression's
//! variables in the order of [`ivjit::Expression::vars`] (first appearance in the expression),
//! leaving out the variables given with `--var`: `[x_lo, x_hi, y_lo, y_hi, ...]`. `NaN, NaN` is
//! the empty set. Bounds are exact floats, used as they are.
//! Output: a `<f8` array of shape `(n_boxes, 2 * n_outputs)`, `[out1_lo, out1_hi, ...]`, with
//! `NaN, NaN` for an empty result.
//!
//! The format itself is the `npyz` crate's; this module adds what a user of the tool needs: the
//! shape and dtype the expression wants, and errors that name the file, the row and the column.

use super::Batch;
use crate::cli::progress::Progress;
use crate::cli::Failure;
use ivjit::Interval;
use npyz::{DType, NpyFile, NpyHeader, Order, WriterBuilder};
use std::path::Path;

/// The element type of an input array.
#[derive(Clone, Copy)]
enum Dtype {
    F8,
    F4,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::F8 => 8,
            Dtype::F4 => 4,
        }
    }
}

/// Whether a path names a `.npy` file (by extension, case-insensitive).
pub fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// Reads boxes from a `.npy` file: one column pair per variable of `vars` not in `given`.
pub fn read(
    path: &Path,
    vars: &[String],
    given: &[(String, Interval)],
    decorations: bool,
    progress: &mut Progress,
) -> Result<Batch, Failure> {
    let file = path.display();
    let bytes = crate::cli::read_bytes(path, "input file")?;
    let bad = |what: String| Failure::input(format!("{file}: {what}"));
    // The header is npyz's to parse; the reader left behind is the data.
    let mut data: &[u8] = &bytes;
    let header = NpyHeader::from_reader(&mut data).map_err(|e| bad(header_error(&bytes, e)))?;
    let (dtype, n, m) = check_header(&header).map_err(bad)?;
    let given_names: std::collections::HashSet<&str> =
        given.iter().map(|(n, _)| n.as_str()).collect();
    let columns: Vec<String> = vars
        .iter()
        .filter(|v| !given_names.contains(v.as_str()))
        .cloned()
        .collect();
    // With --decorations, each variable may have a third column, its decoration's code (as
    // written to a `.npy` output: 16 com, 12 dac, 8 def, 4 trv, 0 ill): every variable or none.
    let decorated = decorations && !columns.is_empty() && m == 3 * columns.len();
    let per = if decorated { 3 } else { 2 };
    let names: Vec<String> = columns
        .iter()
        .flat_map(|c| {
            let mut v = vec![format!("{c}_lo"), format!("{c}_hi")];
            if decorated {
                v.push(format!("{c}_dec"));
            }
            v
        })
        .collect();
    if m != names.len() {
        let expected = if names.is_empty() {
            "none (every variable is given by --var)".to_string()
        } else {
            names.join(", ")
        };
        let hint = if !decorations && !columns.is_empty() && m == 3 * columns.len() {
            " (three columns per variable are decorated boxes: add --decorations)"
        } else if decorations {
            " (or three per variable, NAME_dec the decoration's code)"
        } else {
            ""
        };
        return Err(bad(format!(
            "the array has {m} columns, but the expression needs {} columns: {expected} \
             (the variables in order of first appearance, without those given by --var){hint}",
            names.len()
        )));
    }
    let need = n
        .checked_mul(m)
        .and_then(|c| c.checked_mul(dtype.size()))
        .ok_or_else(|| bad(format!("shape ({n}, {m}) is too large")))?;
    if data.len() < need {
        return Err(bad(format!(
            "truncated: shape ({n}, {m}) needs {need} bytes of data, the file has {}",
            data.len()
        )));
    }
    if data.len() > need {
        return Err(bad(format!(
            "{} bytes after the data of shape ({n}, {m}); the file is not a single array",
            data.len() - need
        )));
    }
    let read = |e: std::io::Error| bad(format!("cannot read the data: {e}"));
    let npy = NpyFile::with_header(header, data);
    // The values by row, then by column (the evaluator's layout).
    let mut values: Vec<f64> = super::room_for(n.saturating_mul(m), "the batch's inputs")?;
    match dtype {
        Dtype::F8 => {
            for v in npy
                .data::<f64>()
                .map_err(|e| bad(format!("cannot read the data: {e}")))?
            {
                values.push(v.map_err(read)?);
            }
        }
        Dtype::F4 => {
            for v in npy
                .data::<f32>()
                .map_err(|e| bad(format!("cannot read the data: {e}")))?
            {
                values.push(f64::from(v.map_err(read)?));
            }
        }
    }
    let value = |i: usize| values[i];
    progress.phase("reading", n as u64);
    let mut bounds: Vec<Vec<f64>> = Vec::with_capacity(2 * columns.len());
    for _ in 0..2 * columns.len() {
        bounds.push(super::room_for(n, "the batch's inputs")?);
    }
    let mut codes: Vec<Option<Vec<f64>>> = Vec::with_capacity(columns.len());
    for _ in 0..columns.len() {
        codes.push(if decorated {
            Some(super::room_for(n, "the batch's decorations")?)
        } else {
            None
        });
    }
    for r in 0..n {
        for k in 0..columns.len() {
            let (lo, hi) = (value(r * m + per * k), value(r * m + per * k + 1));
            if !(lo.is_nan() && hi.is_nan()) {
                Interval::new(lo, hi).map_err(|e| {
                    // The column at fault: the NaN one of a half-empty pair, the upper bound
                    // when it is -inf, the lower bound otherwise.
                    let col = if hi.is_nan() || (lo <= hi && hi == f64::NEG_INFINITY) {
                        per * k + 1
                    } else {
                        per * k
                    };
                    let hint = if lo.is_nan() || hi.is_nan() {
                        " (an empty box is NaN in both columns of the pair)"
                    } else {
                        ""
                    };
                    bad(format!(
                        "row {r}, column {col} ({}, arr[{r}, {col}] counting from 0): {e}{hint}",
                        names[col]
                    ))
                })?;
            }
            bounds[2 * k].push(lo);
            bounds[2 * k + 1].push(hi);
            if let Some(list) = &mut codes[k] {
                let col = per * k + 2;
                let code = value(r * m + col);
                let at = || {
                    format!(
                        "row {r}, column {col} ({}, arr[{r}, {col}] counting from 0)",
                        names[col]
                    )
                };
                let d = (code.fract() == 0.0 && (0.0..=255.0).contains(&code))
                    .then(|| ivjit::Decoration::from_code(code as u8))
                    .flatten()
                    .ok_or_else(|| {
                        bad(format!(
                            "{}: {code} is not a decoration's code: write 16 (com), 12 (dac), 8 \
                             (def), 4 (trv) or 0 (ill)",
                            at()
                        ))
                    })?;
                let iv = if lo.is_nan() {
                    Interval::EMPTY
                } else {
                    Interval { lo, hi }
                };
                ivjit::DecoratedInterval::new(iv, d).map_err(|e| bad(format!("{}: {e}", at())))?;
                list.push(code);
            }
        }
        if r % 65536 == 0 {
            progress.set(r as u64);
        }
    }
    progress.set(n as u64);
    Ok(Batch {
        columns,
        bounds,
        decorations: codes,
        n,
    })
}

/// The user's message for a header npyz cannot read.
fn header_error(bytes: &[u8], e: std::io::Error) -> String {
    if !bytes.starts_with(b"\x93NUMPY") {
        return "not a NumPy .npy file (it does not start with \\x93NUMPY)".to_string();
    }
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "truncated header".to_string(),
        _ => {
            let why = e.to_string();
            if why.starts_with("unsupported version") {
                format!("{why} (expected 1.0, 2.0 or 3.0)")
            } else {
                format!("malformed header: {why}")
            }
        }
    }
}

/// The dtype and the 2-D shape `(n, m)` of an array the tool can read, or what to do instead.
fn check_header(header: &NpyHeader) -> Result<(Dtype, usize, usize), String> {
    let dtype = match header.dtype() {
        DType::Plain(t) => match t.to_string().as_str() {
            "<f8" => Dtype::F8,
            "<f4" => Dtype::F4,
            s @ (">f8" | ">f4") => {
                return Err(format!(
                    "dtype '{s}' is big-endian; expected little-endian '<f8' (float64) or '<f4' \
                     (float32): save arr.astype('<f8')"
                ))
            }
            other => {
                return Err(format!(
                    "dtype '{other}' is not supported; expected '<f8' (float64) or '<f4' \
                     (float32): save arr.astype(np.float64)"
                ))
            }
        },
        other => {
            return Err(format!(
                "dtype {} is not supported (a record or sub-array type); expected '<f8' \
                 (float64) or '<f4' (float32)",
                other.descr()
            ))
        }
    };
    if header.order() == Order::Fortran {
        return Err(
            "the array is in Fortran order; expected C order: save np.ascontiguousarray(arr)"
                .to_string(),
        );
    }
    let shape = header.shape();
    if shape.len() != 2 {
        return Err(format!(
            "the array has {} dimension{} (shape {}); expected 2: (n_boxes, 2 * n_variables) \
             (for one box, use shape (1, m))",
            shape.len(),
            if shape.len() == 1 { "" } else { "s" },
            shape_text(shape)
        ));
    }
    let size = |v: u64| usize::try_from(v).map_err(|_| "the shape is too large".to_string());
    Ok((dtype, size(shape[0])?, size(shape[1])?))
}

fn shape_text(shape: &[u64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The bytes of a `.npy` file (format 1.0) holding the results (structure of arrays, `n`
/// rows) as a `<f8` array of shape `(n_boxes, 2 * columns)`, with `NaN, NaN` for an empty
/// result (and for an undefined derivative).
pub fn encode(results: &[f64], n: usize, columns: &[super::Column]) -> Result<Vec<u8>, Failure> {
    let failed = |e: std::io::Error| Failure::runtime(format!("cannot encode the results: {e}"));
    let mut out: Vec<u8> = super::room_for(
        128 + n.saturating_mul(16).saturating_mul(columns.len()),
        "the .npy output",
    )?;
    // A decoration is one column (its code), an interval two.
    let width: usize = columns
        .iter()
        .map(|c| if c.decoration { 1 } else { 2 })
        .sum();
    let shape = [n as u64, width as u64];
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(&mut out)
        .begin_nd()
        .map_err(failed)?;
    for i in 0..n {
        for c in columns {
            if c.decoration {
                let code = f64::from(c.decoration_of(results, n, i).code());
                writer.push(&code).map_err(failed)?;
                continue;
            }
            let (lo, hi) = match c.cell(results, n, i) {
                Some(iv) if !iv.is_empty() => (iv.lo, iv.hi),
                _ => (f64::NAN, f64::NAN),
            };
            writer.push(&lo).map_err(failed)?;
            writer.push(&hi).map_err(failed)?;
        }
    }
    writer.finish().map_err(failed)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_read_back() {
        // Two rows, one output: [1, 2] and the empty set (structure of arrays).
        let bytes = encode(
            &[1.0, f64::NAN, 2.0, f64::NAN],
            2,
            &super::super::Column::outputs(1),
        )
        .unwrap();
        let mut data: &[u8] = &bytes;
        let header = NpyHeader::from_reader(&mut data).unwrap();
        let (_, n, m) = check_header(&header).unwrap();
        assert_eq!((n, m, data.len()), (2, 2, 32));
        // The data starts at a multiple of 64 bytes, as NumPy writes it.
        assert_eq!((bytes.len() - data.len()) % 64, 0);
        let v = NpyFile::with_header(header, data)
            .into_vec::<f64>()
            .unwrap();
        assert_eq!(&v[..2], &[1.0, 2.0]);
        assert!(v[2].is_nan() && v[3].is_nan());
    }
}
