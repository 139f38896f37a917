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

use super::Batch;
use crate::cli::progress::Progress;
use crate::cli::Failure;
use ivjit::Interval;
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

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

/// A value of the header dictionary.
#[derive(Debug, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
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
    progress: &mut Progress,
) -> Result<Batch, Failure> {
    let file = path.display();
    let bytes =
        std::fs::read(path).map_err(|e| Failure::input(format!("cannot read {file}: {e}")))?;
    let bad = |what: String| Failure::input(format!("{file}: {what}"));
    let (header, data) = split_header(&bytes).map_err(bad)?;
    let (dtype, n, m) = parse_header(header).map_err(bad)?;
    let columns: Vec<String> = vars
        .iter()
        .filter(|v| !given.iter().any(|(n, _)| n == *v))
        .cloned()
        .collect();
    let names: Vec<String> = columns
        .iter()
        .flat_map(|c| [format!("{c}_lo"), format!("{c}_hi")])
        .collect();
    if m != names.len() {
        let expected = if names.is_empty() {
            "none (every variable is given by --var)".to_string()
        } else {
            names.join(", ")
        };
        return Err(bad(format!(
            "the array has {m} columns, but the expression needs {} columns: {expected} \
             (the variables in order of first appearance, without those given by --var)",
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
    let value = |i: usize| -> f64 {
        match dtype {
            Dtype::F8 => f64::from_le_bytes(data[8 * i..8 * i + 8].try_into().expect("8 bytes")),
            Dtype::F4 => {
                f32::from_le_bytes(data[4 * i..4 * i + 4].try_into().expect("4 bytes")) as f64
            }
        }
    };
    progress.phase("reading", n as u64);
    let mut rows = Vec::with_capacity(n);
    for r in 0..n {
        let mut row = Vec::with_capacity(columns.len());
        for k in 0..columns.len() {
            let (lo, hi) = (value(r * m + 2 * k), value(r * m + 2 * k + 1));
            if lo.is_nan() && hi.is_nan() {
                row.push(Interval::EMPTY);
                continue;
            }
            let iv = Interval::new(lo, hi).map_err(|e| {
                // The column at fault: the NaN one of a half-empty pair, the upper bound when it
                // is -inf, the lower bound otherwise.
                let col = if hi.is_nan() || (lo <= hi && hi == f64::NEG_INFINITY) {
                    2 * k + 1
                } else {
                    2 * k
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
            row.push(iv);
        }
        rows.push(row);
        if r % 65536 == 0 {
            progress.set(r as u64);
        }
    }
    progress.set(n as u64);
    Ok(Batch { columns, rows })
}

/// Splits a file into its header text and its data, checking the magic and version.
fn split_header(bytes: &[u8]) -> Result<(&str, &[u8]), String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a NumPy .npy file (it does not start with \\x93NUMPY)".to_string());
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize,
            12,
        ),
        2 | 3 => return Err("truncated header".to_string()),
        _ => {
            return Err(format!(
                "unsupported .npy format version {major}.{minor} (expected 1.0, 2.0 or 3.0)"
            ))
        }
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| {
            format!(
                "truncated header: it should be {len} bytes, the file has {}",
                bytes.len() - start
            )
        })?;
    let header = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| "the header is not text".to_string())?;
    Ok((header, &bytes[end..]))
}

/// Parses the header dictionary: the dtype and the 2-D shape `(n, m)`.
fn parse_header(header: &str) -> Result<(Dtype, usize, usize), String> {
    let dict = parse_dict(header.trim())
        .ok_or_else(|| format!("malformed header {:?}", header.trim_end()))?;
    let get = |key: &str| {
        dict.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("the header has no '{key}'"))
    };
    let dtype = match get("descr")? {
        Value::Str(s) => match s.as_str() {
            "<f8" | "=f8" | "f8" | "<d" | "=d" | "d" => Dtype::F8,
            "<f4" | "=f4" | "f4" | "<f" | "=f" | "f" => Dtype::F4,
            ">f8" | ">f4" | ">d" | ">f" => {
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
        _ => return Err("the header's 'descr' is not a simple dtype string".to_string()),
    };
    match get("fortran_order")? {
        Value::Bool(false) => {}
        Value::Bool(true) => {
            return Err("the array is in Fortran order; expected C order: save \
                 np.ascontiguousarray(arr)"
                .to_string())
        }
        _ => return Err("the header's 'fortran_order' is not True or False".to_string()),
    }
    let shape = match get("shape")? {
        Value::Tuple(t) => t,
        _ => return Err("the header's 'shape' is not a tuple".to_string()),
    };
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

/// Parses a Python dict literal with string keys whose values are strings, booleans or tuples
/// of integers (what NumPy writes). `None` when malformed.
fn parse_dict(s: &str) -> Option<Vec<(String, Value)>> {
    let mut p = Parser {
        s: s.as_bytes(),
        i: 0,
    };
    p.expect(b'{')?;
    let mut out = Vec::new();
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        let value = p.value()?;
        out.push((key, value));
        p.ws();
        if p.eat(b',') {
            continue;
        }
        p.ws();
        p.expect(b'}')?;
        break;
    }
    p.ws();
    (p.i == p.s.len()).then_some(out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        self.eat(c).then_some(())
    }
    fn string(&mut self) -> Option<String> {
        let q = *self.s.get(self.i)?;
        if q != b'\'' && q != b'"' {
            return None;
        }
        let start = self.i + 1;
        let len = self.s[start..].iter().position(|&c| c == q)?;
        self.i = start + len + 1;
        String::from_utf8(self.s[start..start + len].to_vec()).ok()
    }
    fn value(&mut self) -> Option<Value> {
        let rest = &self.s[self.i..];
        if rest.starts_with(b"True") {
            self.i += 4;
            return Some(Value::Bool(true));
        }
        if rest.starts_with(b"False") {
            self.i += 5;
            return Some(Value::Bool(false));
        }
        if self.eat(b'(') {
            let mut t = Vec::new();
            loop {
                self.ws();
                if self.eat(b')') {
                    return Some(Value::Tuple(t));
                }
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                // Python 2 era files may write long integers as `3L`.
                let n = std::str::from_utf8(&self.s[start..self.i])
                    .ok()?
                    .parse()
                    .ok()?;
                self.eat(b'L');
                t.push(n);
                self.ws();
                if !self.eat(b',') {
                    self.ws();
                    self.expect(b')')?;
                    return Some(Value::Tuple(t));
                }
            }
        }
        self.string().map(Value::Str)
    }
}

/// The bytes of a `.npy` file (format 1.0) holding the results as a `<f8` array of shape
/// `(n_boxes, 2 * n_outputs)`.
pub fn encode(results: &[Vec<Interval>], n_outputs: usize) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}",
        results.len(),
        2 * n_outputs
    );
    // Magic (6) + version (2) + header length (2) + header, padded with spaces so that the data
    // starts at a multiple of 64 bytes, ending in a newline.
    let unpadded = MAGIC.len() + 4 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    let header_len = dict.len() + pad + 1;
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + header_len + results.len() * 16 * n_outputs);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header_len as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\n');
    for row in results {
        for iv in row {
            let (lo, hi) = if iv.is_empty() {
                (f64::NAN, f64::NAN)
            } else {
                (iv.lo, iv.hi)
            };
            out.extend_from_slice(&lo.to_le_bytes());
            out.extend_from_slice(&hi.to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_padded_to_64_bytes() {
        let iv = Interval::new(1.0, 2.0).unwrap();
        let bytes = encode(&[vec![iv], vec![Interval::EMPTY]], 1);
        let (header, data) = split_header(&bytes).unwrap();
        assert_eq!((bytes.len() - data.len()) % 64, 0);
        assert!(header.ends_with('\n'));
        let (_, n, m) = parse_header(header).unwrap();
        assert_eq!((n, m, data.len()), (2, 2, 32));
    }

    #[test]
    fn dict_parser_accepts_numpy_variants() {
        let d = parse_dict("{\"descr\": \"<f4\", 'fortran_order': False, 'shape': (3L, 4L)}");
        assert_eq!(d.unwrap()[2].1, Value::Tuple(vec![3, 4]));
        assert_eq!(
            parse_dict("{'shape': (5,), }").unwrap()[0].1,
            Value::Tuple(vec![5])
        );
        assert!(parse_dict("{'shape': (5,) ").is_none());
    }
}
