//! Checking the values of a batch: every (lo, hi) pair of every box an interval (or NaN, NaN
//! for the empty set), and for f32 programs the bounds rounded outward to f32. (The batch's
//! shape is [`crate::shape`]'s concern.)

use std::borrow::Cow;

use rayon::prelude::*;

use crate::gpu::PARALLEL_PIECE;
use crate::scalar::Program;
use crate::{Error, Interval, IntervalError, Precision};

/// One array of bounds of a batch given array by array ([`crate::Evaluator::eval_columns`]):
/// the lower or the upper bounds of one variable, one element per box. f64 arrays are read
/// where they are; f32 arrays are widened (exactly) on the way in, which an f32 program's
/// outward rounding pass does anyway.
#[derive(Clone, Copy, Debug)]
pub enum Column<'a> {
    /// Bounds in double precision.
    F64(&'a [f64]),
    /// Bounds in single precision.
    F32(&'a [f32]),
}

impl Column<'_> {
    /// The number of boxes the column holds.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(s) => s.len(),
            Column::F32(s) => s.len(),
        }
    }

    /// Whether the column holds no box.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> From<&'a [f64]> for Column<'a> {
    fn from(s: &'a [f64]) -> Self {
        Column::F64(s)
    }
}

impl<'a> From<&'a [f32]> for Column<'a> {
    fn from(s: &'a [f32]) -> Self {
        Column::F32(s)
    }
}

/// `inputs` (`2 * n_vars` columns of `n` boxes: lo then hi of each variable) checked as
/// [`crate::Evaluator::eval_soa`] describes, column by column: for an f64 program an f64
/// column is used as it is (a valid bound is not changed, so no copy is made: at 2^28 boxes a
/// copy is gigabytes of fresh memory), an f32 column widened; for an f32 program, with
/// `outward_f32`, a copy rounded outward to f32 (the GPU's f32 kernels need it; the CPU
/// evaluator rounds an f32 program's inputs as it reads them, so it asks for none). The first
/// invalid box (lowest variable, then lowest box) is the error.
/// Variables one after the other, the boxes of each in parallel tasks of [`PARALLEL_PIECE`] (a
/// single thread checks a few hundred million bounds a second, a GPU takes them faster).
pub(crate) fn checked<'a>(
    program: &Program,
    inputs: &[Column<'a>],
    n: usize,
    outward_f32: bool,
) -> Result<Vec<Cow<'a, [f64]>>, Error> {
    let precision = match program.precision {
        Precision::F32 if !outward_f32 => Precision::F64,
        p => p,
    };
    let mut result: Vec<Cow<'a, [f64]>> = Vec::with_capacity(inputs.len());
    // Boxes `first..` of one variable: the lo and hi bounds in, for f32 the rounded ones out;
    // the first failure with its box.
    let check = |first: usize,
                 out: Option<(&mut [f64], &mut [f64])>,
                 (lo, hi): (&[f64], &[f64])|
     -> Result<(), (usize, IntervalError)> {
        let valid = |i: usize, l: f64, h: f64| {
            if l.is_nan() && h.is_nan() {
                Ok(Interval::EMPTY)
            } else {
                Interval::new(l, h).map_err(|e| (first + i, e))
            }
        };
        match out {
            None => {
                // One branch-free pass (it vectorizes) says whether any box is invalid; only
                // then is the first one looked for, with its error.
                let ok = |l: f64, h: f64| {
                    (l <= h) & (l != f64::INFINITY) & (h != f64::NEG_INFINITY)
                        | (l.is_nan() & h.is_nan())
                };
                let bad = lo
                    .iter()
                    .zip(hi)
                    .fold(false, |bad, (&l, &h)| bad | !ok(l, h));
                if bad {
                    for (i, (&l, &h)) in lo.iter().zip(hi).enumerate() {
                        valid(i, l, h)?;
                    }
                }
            }
            Some((out_lo, out_hi)) => {
                let pairs = out_lo.iter_mut().zip(out_hi).zip(lo).zip(hi);
                for (i, (((ol, oh), &l), &h)) in pairs.enumerate() {
                    let iv = valid(i, l, h)?.to_f32_enclosure();
                    (*ol, *oh) = (iv.lo, iv.hi);
                }
            }
        }
        Ok(())
    };
    for (k, pair) in inputs.chunks(2).enumerate().take(program.n_vars()) {
        let (lo, hi) = (&pair[0], &pair[1]);
        debug_assert!(lo.len() == n && hi.len() == n, "the shape is checked first");
        // Every element is written below; zeroed memory costs no pass of its own.
        let mut rounded = match precision {
            Precision::F64 => None,
            Precision::F32 => Some((vec![0.0; n], vec![0.0; n])),
        };
        let (lo_w, hi_w) = (widen(lo), widen(hi));
        let out = rounded
            .as_mut()
            .map(|(l, h)| (l.as_mut_slice(), h.as_mut_slice()));
        let (lo_s, hi_s): (&[f64], &[f64]) = (&lo_w, &hi_w);
        let outcome = if n <= PARALLEL_PIECE {
            check(0, out, (lo_s, hi_s))
        } else {
            let ins = lo_s
                .par_chunks(PARALLEL_PIECE)
                .zip(hi_s.par_chunks(PARALLEL_PIECE))
                .enumerate();
            // The failure of the earliest task, hence of the earliest box.
            let first_failure = match out {
                None => ins.find_map_first(|(t, b)| check(t * PARALLEL_PIECE, None, b).err()),
                Some((out_lo, out_hi)) => out_lo
                    .par_chunks_mut(PARALLEL_PIECE)
                    .zip(out_hi.par_chunks_mut(PARALLEL_PIECE))
                    .zip(ins)
                    .find_map_first(|(o, (t, b))| check(t * PARALLEL_PIECE, Some(o), b).err()),
            };
            first_failure.map_or(Ok(()), Err)
        };
        outcome.map_err(|(i, error)| Error::Input {
            name: format!("box {i}, variable {}", program.var_names[k]),
            error,
        })?;
        match rounded {
            Some((l, h)) => result.extend([Cow::Owned(l), Cow::Owned(h)]),
            None => result.extend([lo_w, hi_w]),
        }
    }
    Ok(result)
}

/// A column as f64 values, borrowed for the column's lifetime when it is f64.
fn widen<'a>(c: &Column<'a>) -> Cow<'a, [f64]> {
    match *c {
        Column::F64(s) => Cow::Borrowed(s),
        Column::F32(s) => {
            let mut w = vec![0.0; s.len()];
            crate::gpu::convert(std::iter::once((&mut w[..], s)), f64::from);
            Cow::Owned(w)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Evaluator, Expression};

    /// Large batches are checked in parallel tasks: the checked bounds are those of a serial
    /// pass, and the error names the first invalid box (first variable, then first box), also
    /// when later tasks fail too.
    #[test]
    fn input_checks_in_parallel_equal_a_serial_pass() {
        let expr = Expression::parse("x - y").unwrap();
        let p = PARALLEL_PIECE;
        for n in [1, 5, p - 1, p, p + 1, 3 * p + 5] {
            let mut inputs = Vec::with_capacity(4 * n);
            for k in 0..2 {
                let lo: Vec<f64> = (0..n)
                    .map(|i| (i as f64 + 0.1) * (k as f64 - 0.7))
                    .collect();
                let hi = lo.iter().enumerate().map(|(i, l)| l + (i % 7) as f64 * 0.3);
                inputs.extend_from_slice(&lo);
                inputs.extend(hi);
            }
            // Some empty boxes (NaN, NaN).
            for i in (0..n).step_by(1001) {
                inputs[i] = f64::NAN;
                inputs[n + i] = f64::NAN;
            }
            for precision in [Precision::F64, Precision::F32] {
                let eval = Evaluator::new(&expr, precision, BackendChoice::Cpu).unwrap();
                let serial: Vec<f64> = (0..2)
                    .flat_map(|k| {
                        let iv = |i: usize| {
                            let (lo, hi) = (inputs[2 * k * n + i], inputs[(2 * k + 1) * n + i]);
                            let iv = if lo.is_nan() {
                                Interval::EMPTY
                            } else {
                                Interval::new(lo, hi).unwrap()
                            };
                            match precision {
                                Precision::F64 => iv,
                                Precision::F32 => iv.to_f32_enclosure(),
                            }
                        };
                        let los: Vec<f64> = (0..n).map(|i| iv(i).lo).collect();
                        let his: Vec<f64> = (0..n).map(|i| iv(i).hi).collect();
                        los.into_iter().chain(his)
                    })
                    .collect();
                let columns: Vec<Column> = inputs.chunks(n).map(Column::F64).collect();
                let got: Vec<f64> = checked(eval.program(), &columns, n, true).unwrap().concat();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert!(bits(&got) == bits(&serial), "n = {n}, {precision:?}");
                // The same bounds as f32 columns (exact here only for the f32 program's
                // rounding, which is what it does with any column).
                if precision == Precision::F32 {
                    let narrow: Vec<Vec<f32>> = serial
                        .chunks(n)
                        .map(|c| c.iter().map(|&x| x as f32).collect())
                        .collect();
                    let columns: Vec<Column> = narrow.iter().map(|c| Column::F32(c)).collect();
                    let again = checked(eval.program(), &columns, n, true).unwrap().concat();
                    assert!(bits(&again) == bits(&serial), "n = {n}, f32 columns");
                }
            }
            // Inverted boxes: y at boxes n/2 and n-1, x at box n-1.
            let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
            let mut bad = inputs.clone();
            let invert = |v: &mut [f64], k: usize, i: usize| {
                (v[2 * k * n + i], v[(2 * k + 1) * n + i]) = (2.0, 1.0);
            };
            invert(&mut bad, 1, n / 2);
            invert(&mut bad, 1, n - 1);
            let name = |e: Error| match e {
                Error::Input { name, .. } => name,
                other => panic!("not an input error: {other}"),
            };
            let columns: Vec<Column> = bad.chunks(n).map(Column::F64).collect();
            let e = checked(eval.program(), &columns, n, true).unwrap_err();
            assert_eq!(name(e), format!("box {}, variable y", n / 2), "n = {n}");
            invert(&mut bad, 0, n - 1);
            let e = eval.eval_soa(&bad, n).unwrap_err();
            assert_eq!(name(e), format!("box {}, variable x", n - 1), "n = {n}");
        }
    }

    /// The branch-free validity pass agrees with `Interval::new` (the definition of a valid
    /// box, both NaN meaning empty) on every pair of special bounds: NaN, infinities, signed
    /// zeros, the largest and smallest floats. A box it wrongly passed would reach the engines
    /// unchecked; one it wrongly refused would be an error without a reason.
    #[test]
    fn the_validity_pass_is_interval_new() {
        let specials = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::MAX,
            -f64::MAX,
            f64::from_bits(1),
            -f64::from_bits(1),
        ];
        let expr = crate::Expression::parse("x").unwrap();
        for precision in [Precision::F64, Precision::F32] {
            let eval = crate::Evaluator::new(&expr, precision, crate::BackendChoice::Cpu).unwrap();
            for &lo in &specials {
                for &hi in &specials {
                    let valid = (lo.is_nan() && hi.is_nan()) || Interval::new(lo, hi).is_ok();
                    let (l, h) = ([lo], [hi]);
                    for outward in [false, true] {
                        let columns = [Column::F64(&l), Column::F64(&h)];
                        let got = checked(eval.program(), &columns, 1, outward).is_ok();
                        assert_eq!(got, valid, "[{lo:e}, {hi:e}] {precision:?} {outward}");
                    }
                }
            }
        }
    }
}
