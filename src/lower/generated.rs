//! The interpreted operations (`interpreted::OPERATIONS`) in Rust, generated from their
//! lowering (`lower_op`) by `interpreted::operations`: do not edit. The test
//! `the_operations_are_the_lowerings` fails when this file is not what the lowering gives;
//! `IVJIT_BLESS=1 cargo test --lib the_operations_are_the_lowerings` writes it again.

use crate::round::Round;
use crate::scalar::emit::Ops;

/// The operations lowered in f64.
pub(crate) mod f64_ops {
    use super::*;

    /// `neg`, lowered.
    #[inline(always)]
    pub(crate) fn neg<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = v1.neg();
        let v3 = v0.neg();
        (v2, v3)
    }

    /// `add`, lowered.
    #[inline(always)]
    pub(crate) fn add<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.add(v2, Round::Down);
        let v5 = v1.add(v3, Round::Up);
        (v4, v5)
    }

    /// `sub`, lowered.
    #[inline(always)]
    pub(crate) fn sub<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.sub(v3, Round::Down);
        let v5 = v1.sub(v2, Round::Up);
        (v4, v5)
    }

    /// `mul`, lowered.
    #[inline(always)]
    pub(crate) fn mul<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.mul(v2, Round::Down);
        let v5 = v0.mul(v3, Round::Down);
        let v6 = v1.mul(v2, Round::Down);
        let v7 = v1.mul(v3, Round::Down);
        let v8 = v0.mul(v2, Round::Up);
        let v9 = v0.mul(v3, Round::Up);
        let v10 = v1.mul(v2, Round::Up);
        let v11 = v1.mul(v3, Round::Up);
        let v12 = v4.min(v5);
        let v13 = v6.min(v7);
        let v14 = v8.max(v9);
        let v15 = v10.max(v11);
        let v16 = v12.min(v13);
        let v17 = v14.max(v15);
        let v18 = v16.is_nan();
        let v19 = v0.is_nan();
        let v20 = v2.is_nan();
        let v21 = v19 | v20;
        let v22 = !v21;
        let v23 = v18 & v22;
        let v24 = T::exact(0.0);
        let v25 = T::select(v23, v24, v16);
        let v26 = T::select(v23, v24, v17);
        (v25, v26)
    }

    /// `sqr`, lowered.
    #[inline(always)]
    pub(crate) fn sqr<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = v1.neg();
        let v3 = v0.greater(v2);
        let v4 = T::select(v3, v0, v2);
        let v5 = T::exact(0.0);
        let v6 = v4.less_eq(v5);
        let v7 = T::select(v6, v5, v4);
        let v8 = v0.neg();
        let v9 = v8.greater(v1);
        let v10 = T::select(v9, v8, v1);
        let v11 = v7.mul(v7, Round::Down);
        let v12 = v10.mul(v10, Round::Up);
        (v11, v12)
    }

    /// `sqrt`, lowered.
    #[inline(always)]
    pub(crate) fn sqrt<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = T::exact(0.0);
        let v3 = v0.less(v2);
        let v4 = T::select(v3, v2, v0);
        let v5 = v4.sqrt(Round::Down);
        let v6 = v1.sqrt(Round::Up);
        let v7 = v1.less(v2);
        let v8 = T::exact(f64::NAN);
        let v9 = T::select(v7, v8, v5);
        let v10 = T::select(v7, v8, v6);
        (v9, v10)
    }

    /// `abs`, lowered.
    #[inline(always)]
    pub(crate) fn abs<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = v1.neg();
        let v3 = v0.max(v2);
        let v4 = T::exact(0.0);
        let v5 = v3.less_eq(v4);
        let v6 = T::select(v5, v4, v3);
        let v7 = v0.neg();
        let v8 = v7.max(v1);
        (v6, v8)
    }

    /// `min`, lowered.
    #[inline(always)]
    pub(crate) fn min<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.min(v2);
        let v5 = v1.min(v3);
        let v6 = v0.is_nan();
        let v7 = v2.is_nan();
        let v8 = v6 | v7;
        let v9 = T::exact(f64::NAN);
        let v10 = T::select(v8, v9, v4);
        let v11 = T::select(v8, v9, v5);
        (v10, v11)
    }

    /// `max`, lowered.
    #[inline(always)]
    pub(crate) fn max<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.max(v2);
        let v5 = v1.max(v3);
        let v6 = v0.is_nan();
        let v7 = v2.is_nan();
        let v8 = v6 | v7;
        let v9 = T::exact(f64::NAN);
        let v10 = T::select(v8, v9, v4);
        let v11 = T::select(v8, v9, v5);
        (v10, v11)
    }

    /// `intersect`, lowered.
    #[inline(always)]
    pub(crate) fn intersect<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.max(v2);
        let v5 = v1.min(v3);
        let v6 = v4.greater(v5);
        let v7 = v0.is_nan();
        let v8 = v2.is_nan();
        let v9 = v7 | v8;
        let v10 = v9 | v6;
        let v11 = T::exact(f64::NAN);
        let v12 = T::select(v10, v11, v4);
        let v13 = T::select(v10, v11, v5);
        (v12, v13)
    }

    /// `div`, lowered.
    #[inline(always)]
    pub(crate) fn div<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = T::exact(0.0);
        let v5 = v2.greater_eq(v4);
        let v6 = v3.less_eq(v4);
        let v7 = v2.add(v4, Round::Nearest);
        let v8 = v0.greater_eq(v4);
        let v9 = v1.greater(v4);
        let v10 = T::select(v8, v3, v7);
        let v11 = T::select(v9, v7, v3);
        let v12 = T::exact(f64::from_bits(0x8000000000000000));
        let v13 = v3.equal(v4);
        let v14 = T::select(v13, v12, v3);
        let v15 = T::select(v9, v14, v2);
        let v16 = T::select(v8, v2, v14);
        let v17 = T::select(v5, v0, v1);
        let v18 = T::select(v5, v10, v15);
        let v19 = T::select(v5, v1, v0);
        let v20 = T::select(v5, v11, v16);
        let v21 = v17.div(v18, Round::Down);
        let v22 = v19.div(v20, Round::Up);
        let v23 = !v5;
        let v24 = !v6;
        let v25 = v23 & v24;
        let v26 = v0.equal(v4);
        let v27 = v1.equal(v4);
        let v28 = v26 & v27;
        let v29 = T::exact(f64::NEG_INFINITY);
        let v30 = T::exact(f64::INFINITY);
        let v31 = T::select(v28, v4, v29);
        let v32 = T::select(v28, v4, v30);
        let v33 = T::select(v25, v31, v21);
        let v34 = T::select(v25, v32, v22);
        let v35 = v5 & v6;
        let v36 = v0.is_nan();
        let v37 = v2.is_nan();
        let v38 = v36 | v37;
        let v39 = v38 | v35;
        let v40 = T::exact(f64::NAN);
        let v41 = T::select(v39, v40, v33);
        let v42 = T::select(v39, v40, v34);
        (v41, v42)
    }

    /// `hull`, lowered.
    #[inline(always)]
    pub(crate) fn hull<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.min(v2);
        let v5 = v1.max(v3);
        (v4, v5)
    }
}

/// The operations lowered in f32.
pub(crate) mod f32_ops {
    use super::*;

    /// `neg`, lowered.
    #[inline(always)]
    pub(crate) fn neg<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = v1.neg();
        let v3 = v0.neg();
        (v2, v3)
    }

    /// `add`, lowered.
    #[inline(always)]
    pub(crate) fn add<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.add(v2, Round::Down);
        let v5 = v1.add(v3, Round::Up);
        (v4, v5)
    }

    /// `sub`, lowered.
    #[inline(always)]
    pub(crate) fn sub<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.sub(v3, Round::Down);
        let v5 = v1.sub(v2, Round::Up);
        (v4, v5)
    }

    /// `mul`, lowered.
    #[inline(always)]
    pub(crate) fn mul<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.mul(v2, Round::Down);
        let v5 = v0.mul(v3, Round::Down);
        let v6 = v1.mul(v2, Round::Down);
        let v7 = v1.mul(v3, Round::Down);
        let v8 = v0.mul(v2, Round::Up);
        let v9 = v0.mul(v3, Round::Up);
        let v10 = v1.mul(v2, Round::Up);
        let v11 = v1.mul(v3, Round::Up);
        let v12 = v4.min(v5);
        let v13 = v6.min(v7);
        let v14 = v8.max(v9);
        let v15 = v10.max(v11);
        let v16 = v12.min(v13);
        let v17 = v14.max(v15);
        let v18 = v16.is_nan();
        let v19 = v0.is_nan();
        let v20 = v2.is_nan();
        let v21 = v19 | v20;
        let v22 = !v21;
        let v23 = v18 & v22;
        let v24 = T::exact(0.0);
        let v25 = T::select(v23, v24, v16);
        let v26 = T::select(v23, v24, v17);
        (v25, v26)
    }

    /// `sqr`, lowered.
    #[inline(always)]
    pub(crate) fn sqr<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = v1.neg();
        let v3 = v0.max(v2);
        let v4 = T::exact(0.0);
        let v5 = v3.less_eq(v4);
        let v6 = T::select(v5, v4, v3);
        let v7 = v0.neg();
        let v8 = v7.max(v1);
        let v9 = v6.mul(v6, Round::Down);
        let v10 = v8.mul(v8, Round::Up);
        (v9, v10)
    }

    /// `sqrt`, lowered.
    #[inline(always)]
    pub(crate) fn sqrt<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = T::exact(0.0);
        let v3 = v0.less(v2);
        let v4 = T::select(v3, v2, v0);
        let v5 = v4.sqrt(Round::Down);
        let v6 = v1.sqrt(Round::Up);
        let v7 = v1.less(v2);
        let v8 = T::exact(f64::NAN);
        let v9 = T::select(v7, v8, v5);
        let v10 = T::select(v7, v8, v6);
        (v9, v10)
    }

    /// `abs`, lowered.
    #[inline(always)]
    pub(crate) fn abs<T: Ops>(x: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = v1.neg();
        let v3 = v0.max(v2);
        let v4 = T::exact(0.0);
        let v5 = v3.less_eq(v4);
        let v6 = T::select(v5, v4, v3);
        let v7 = v0.neg();
        let v8 = v7.max(v1);
        (v6, v8)
    }

    /// `min`, lowered.
    #[inline(always)]
    pub(crate) fn min<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.min(v2);
        let v5 = v1.min(v3);
        let v6 = v0.is_nan();
        let v7 = v2.is_nan();
        let v8 = v6 | v7;
        let v9 = T::exact(f64::NAN);
        let v10 = T::select(v8, v9, v4);
        let v11 = T::select(v8, v9, v5);
        (v10, v11)
    }

    /// `max`, lowered.
    #[inline(always)]
    pub(crate) fn max<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.max(v2);
        let v5 = v1.max(v3);
        let v6 = v0.is_nan();
        let v7 = v2.is_nan();
        let v8 = v6 | v7;
        let v9 = T::exact(f64::NAN);
        let v10 = T::select(v8, v9, v4);
        let v11 = T::select(v8, v9, v5);
        (v10, v11)
    }

    /// `intersect`, lowered.
    #[inline(always)]
    pub(crate) fn intersect<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.max(v2);
        let v5 = v1.min(v3);
        let v6 = v4.greater(v5);
        let v7 = v0.is_nan();
        let v8 = v2.is_nan();
        let v9 = v7 | v8;
        let v10 = v9 | v6;
        let v11 = T::exact(f64::NAN);
        let v12 = T::select(v10, v11, v4);
        let v13 = T::select(v10, v11, v5);
        (v12, v13)
    }

    /// `div`, lowered.
    #[inline(always)]
    pub(crate) fn div<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = T::exact(0.0);
        let v5 = v2.greater_eq(v4);
        let v6 = v3.less_eq(v4);
        let v7 = v2.add(v4, Round::Nearest);
        let v8 = v0.greater_eq(v4);
        let v9 = v1.greater(v4);
        let v10 = T::select(v8, v3, v7);
        let v11 = T::select(v9, v7, v3);
        let v12 = T::exact(f64::from_bits(0x8000000000000000));
        let v13 = v3.equal(v4);
        let v14 = T::select(v13, v12, v3);
        let v15 = T::select(v9, v14, v2);
        let v16 = T::select(v8, v2, v14);
        let v17 = T::select(v5, v0, v1);
        let v18 = T::select(v5, v10, v15);
        let v19 = T::select(v5, v1, v0);
        let v20 = T::select(v5, v11, v16);
        let v21 = v17.div(v18, Round::Down);
        let v22 = v19.div(v20, Round::Up);
        let v23 = !v5;
        let v24 = !v6;
        let v25 = v23 & v24;
        let v26 = v0.equal(v4);
        let v27 = v1.equal(v4);
        let v28 = v26 & v27;
        let v29 = T::exact(f64::NEG_INFINITY);
        let v30 = T::exact(f64::INFINITY);
        let v31 = T::select(v28, v4, v29);
        let v32 = T::select(v28, v4, v30);
        let v33 = T::select(v25, v31, v21);
        let v34 = T::select(v25, v32, v22);
        let v35 = v5 & v6;
        let v36 = v0.is_nan();
        let v37 = v2.is_nan();
        let v38 = v36 | v37;
        let v39 = v38 | v35;
        let v40 = T::exact(f64::NAN);
        let v41 = T::select(v39, v40, v33);
        let v42 = T::select(v39, v40, v34);
        (v41, v42)
    }

    /// `hull`, lowered.
    #[inline(always)]
    pub(crate) fn hull<T: Ops>(x: (T, T), y: (T, T)) -> (T, T) {
        let v0 = x.0;
        let v1 = x.1;
        let v2 = y.0;
        let v3 = y.1;
        let v4 = v0.min(v2);
        let v5 = v1.max(v3);
        (v4, v5)
    }
}
