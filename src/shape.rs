//! The one batch-shape error: a box with the wrong number of intervals, or structure-of-arrays
//! buffers of the wrong length. Every entry point that takes a batch (the [`crate::Evaluator`],
//! [`crate::gpu::GpuKernel`]) checks with [`check_soa`] and reports this value, never a panic.

/// Why a batch does not have the shape the compiled expression needs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// A box has the wrong number of intervals.
    #[error("a box needs {expected} intervals (one per variable: {vars}), found {found}")]
    Box {
        /// The number of variables of the expression.
        expected: usize,
        /// The number of intervals in the box.
        found: usize,
        /// The variable names, comma-separated, in box order.
        vars: String,
    },
    /// The input array does not hold `2 * n_vars * n` values.
    #[error("expected {expected} input values (2 x {n_vars} variables x {n} boxes), got {got}")]
    Inputs {
        /// `2 * n_vars * n`.
        expected: usize,
        /// The length given.
        got: usize,
        /// The expression's number of variables.
        n_vars: usize,
        /// The number of boxes asked for.
        n: usize,
    },
    /// The output array does not hold `2 * n_outputs * n` values.
    #[error("expected room for {expected} output values (2 x {n_outputs} outputs x {n} boxes), got {got}")]
    Outputs {
        /// `2 * n_outputs * n`.
        expected: usize,
        /// The length given.
        got: usize,
        /// The expression's number of outputs.
        n_outputs: usize,
        /// The number of boxes asked for.
        n: usize,
    },
    /// A contractor needs one range per output of its expression.
    #[error("a contractor needs one range per output ({outputs}), got {ranges}")]
    Ranges {
        /// The expression's number of outputs.
        outputs: usize,
        /// The number of ranges given.
        ranges: usize,
    },
    /// A batch given array by array has the wrong number of input or output arrays.
    #[error(
        "expected {expected} {what} arrays (a lower and an upper bound array per {per}), got {got}"
    )]
    Columns {
        /// "input" or "output".
        what: &'static str,
        /// "variable" or "output".
        per: &'static str,
        /// `2 * n_vars` or `2 * n_outputs`.
        expected: usize,
        /// The number given.
        got: usize,
    },
    /// An array of a batch given array by array has another length than the first one.
    #[error("{what} array {index} holds {len} values, the batch has {n} boxes")]
    ColumnLength {
        /// "input" or "output".
        what: &'static str,
        /// Its place in the list (lo of variable k at 2k, hi at 2k + 1).
        index: usize,
        /// Its length.
        len: usize,
        /// The batch length (the first input array's, or the first output array's).
        n: usize,
    },
    /// `2 * n_vars * n` or `2 * n_outputs * n` does not fit in memory sizes.
    #[error("{n} boxes is too many for one batch")]
    TooLarge {
        /// The number of boxes asked for.
        n: usize,
    },
}

/// Checks structure-of-arrays buffers for `n` boxes of an expression with `n_vars` variables and
/// `n_outputs` outputs: `inputs` values in, room for `outputs` values out.
pub(crate) fn check_soa(
    n_vars: usize,
    n_outputs: usize,
    n: usize,
    inputs: usize,
    outputs: usize,
) -> Result<(), ShapeError> {
    let expected = n
        .checked_mul(2 * n_vars)
        .ok_or(ShapeError::TooLarge { n })?;
    if inputs != expected {
        return Err(ShapeError::Inputs {
            expected,
            got: inputs,
            n_vars,
            n,
        });
    }
    let expected = n
        .checked_mul(2 * n_outputs)
        .ok_or(ShapeError::TooLarge { n })?;
    if outputs != expected {
        return Err(ShapeError::Outputs {
            expected,
            got: outputs,
            n_outputs,
            n,
        });
    }
    Ok(())
}

/// Checks a batch given array by array (`inputs` and `outputs`: the lengths of the arrays, lo
/// then hi of each variable / output) and returns its number of boxes: the first input array's
/// length, or the first output array's when there are no inputs.
pub(crate) fn check_columns(
    n_vars: usize,
    n_outputs: usize,
    inputs: &[usize],
    outputs: &[usize],
) -> Result<usize, ShapeError> {
    for (what, per, expected, got) in [
        ("input", "variable", 2 * n_vars, inputs.len()),
        ("output", "output", 2 * n_outputs, outputs.len()),
    ] {
        if expected != got {
            return Err(ShapeError::Columns {
                what,
                per,
                expected,
                got,
            });
        }
    }
    let n = inputs.first().or(outputs.first()).copied().unwrap_or(0);
    for (what, lens) in [("input", inputs), ("output", outputs)] {
        if let Some((index, &len)) = lens.iter().enumerate().find(|(_, &len)| len != n) {
            return Err(ShapeError::ColumnLength {
                what,
                index,
                len,
                n,
            });
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_checked_in_order() {
        assert_eq!(check_soa(2, 1, 3, 12, 6), Ok(()));
        assert!(matches!(
            check_soa(2, 1, 3, 11, 6),
            Err(ShapeError::Inputs {
                expected: 12,
                got: 11,
                ..
            })
        ));
        assert!(matches!(
            check_soa(2, 1, 3, 12, 7),
            Err(ShapeError::Outputs {
                expected: 6,
                got: 7,
                ..
            })
        ));
        assert!(matches!(
            check_soa(2, 1, usize::MAX, 0, 0),
            Err(ShapeError::TooLarge { .. })
        ));
    }

    #[test]
    fn column_counts_then_lengths_are_checked() {
        assert_eq!(check_columns(1, 1, &[3, 3], &[3, 3]), Ok(3));
        assert_eq!(check_columns(0, 1, &[], &[5, 5]), Ok(5));
        assert_eq!(check_columns(0, 0, &[], &[]), Ok(0));
        assert!(matches!(
            check_columns(2, 1, &[3, 3, 3], &[3, 3]),
            Err(ShapeError::Columns {
                what: "input",
                expected: 4,
                got: 3,
                ..
            })
        ));
        assert!(matches!(
            check_columns(1, 2, &[3, 3], &[3, 3]),
            Err(ShapeError::Columns {
                what: "output",
                expected: 4,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            check_columns(1, 1, &[3, 2], &[3, 3]),
            Err(ShapeError::ColumnLength {
                what: "input",
                index: 1,
                len: 2,
                n: 3
            })
        ));
        assert!(matches!(
            check_columns(1, 1, &[3, 3], &[3, 4]),
            Err(ShapeError::ColumnLength {
                what: "output",
                index: 1,
                len: 4,
                n: 3
            })
        ));
    }
}
