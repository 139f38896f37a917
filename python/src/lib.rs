//! `ivjit._ivjit`: the native half of the Python package (the Python half, `ivjit/__init__.py`,
//! re-exports it with type stubs).
//!
//! A compiled function holds one [`ivjit::Evaluator`]; a call gathers the NumPy bounds into the
//! evaluator's structure-of-arrays batch, runs it with the GIL released, and returns NumPy
//! arrays. Errors become Python exceptions with the library's diagnostic text (the caret
//! included), never a panic across the interpreter.

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

create_exception!(
    _ivjit,
    Error,
    PyException,
    "Base class of every ivjit error."
);
create_exception!(
    _ivjit,
    SyntaxError,
    Error,
    "The expression is malformed or uses something unknown; the message points into it."
);
create_exception!(
    _ivjit,
    InputError,
    Error,
    "A bound is not a valid interval bound (NaN, lo > hi, lo = +inf, ...), or the arrays do not fit."
);
create_exception!(
    _ivjit,
    GpuError,
    Error,
    "No usable GPU for backend='gpu', or the GPU failed."
);

/// The library's error as the matching Python exception; compile errors carry the rendered
/// diagnostic (the source line and a caret under the place).
fn to_py(e: ivjit::Error, source: &str) -> PyErr {
    match e {
        ivjit::Error::Compile(d) => SyntaxError::new_err(d.render(source)),
        ivjit::Error::Input { .. } | ivjit::Error::Shape(_) => InputError::new_err(e.to_string()),
        ivjit::Error::NoGpu(_) | ivjit::Error::Gpu(_) => GpuError::new_err(e.to_string()),
        other => Error::new_err(other.to_string()),
    }
}

fn precision_of(name: &str) -> PyResult<ivjit::Precision> {
    match name {
        "f64" | "float64" => Ok(ivjit::Precision::F64),
        "f32" | "float32" => Ok(ivjit::Precision::F32),
        _ => Err(PyValueError::new_err(format!(
            "precision must be 'f64' or 'f32', not {name:?}"
        ))),
    }
}

fn backend_of(name: &str) -> PyResult<ivjit::BackendChoice> {
    match name {
        "auto" => Ok(ivjit::BackendChoice::Auto),
        "cpu" => Ok(ivjit::BackendChoice::Cpu),
        "gpu" => Ok(ivjit::BackendChoice::Gpu),
        _ => Err(PyValueError::new_err(format!(
            "backend must be 'auto', 'cpu' or 'gpu', not {name:?}"
        ))),
    }
}

/// An expression compiled for one precision and backend; call it with one `(lo, hi)` pair of
/// arrays (or scalars) per variable.
#[pyclass(module = "ivjit", frozen)]
struct Function {
    expr: ivjit::Expression,
    eval: ivjit::Evaluator,
}

/// One bound of one variable: a float64 array (read in place when it is one) or a scalar.
enum Bound<'py> {
    Array(PyReadonlyArray1<'py, f64>),
    Scalar(f64),
}

impl Bound<'_> {
    fn len(&self) -> Option<usize> {
        match self {
            Bound::Array(a) => Some(a.len().unwrap_or(0)),
            Bound::Scalar(_) => None,
        }
    }

    /// Copies the bound into `dst` (n values), broadcasting a scalar.
    fn fill(&self, dst: &mut [f64]) -> PyResult<()> {
        match self {
            Bound::Scalar(x) => dst.fill(*x),
            Bound::Array(a) => match a.as_slice() {
                Ok(s) => dst.copy_from_slice(s),
                Err(_) => {
                    for (d, x) in dst.iter_mut().zip(a.as_array().iter()) {
                        *d = *x;
                    }
                }
            },
        }
        Ok(())
    }
}

fn bound<'py>(
    py: Python<'py>,
    value: &pyo3::Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py>> {
    if let Ok(x) = value.downcast::<pyo3::types::PyFloat>() {
        return Ok(Bound::Scalar(x.value()));
    }
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (value, "float64"))?;
    let ndim = arr.getattr("ndim")?.extract::<usize>()?;
    if ndim == 0 {
        return Ok(Bound::Scalar(arr.call_method0("item")?.extract::<f64>()?));
    }
    if ndim != 1 {
        return Err(InputError::new_err(format!(
            "{what}: expected a 1-D array or a number"
        )));
    }
    let arr = arr.downcast_into::<PyArray1<f64>>()?;
    Ok(Bound::Array(arr.readonly()))
}

#[pymethods]
impl Function {
    /// The variables, in the order of the batch (sorted by first appearance in the source).
    #[getter]
    fn vars(&self) -> Vec<String> {
        self.expr.vars().to_vec()
    }

    /// The number of outputs (comma-separated expressions).
    #[getter]
    fn outputs(&self) -> usize {
        self.expr.n_outputs()
    }

    /// "f64" or "f32".
    #[getter]
    fn precision(&self) -> &'static str {
        self.eval.precision().name()
    }

    /// "gpu" or "cpu": where the batches run.
    #[getter]
    fn backend(&self) -> &'static str {
        self.eval.backend().name()
    }

    /// The interval IR after rewrites, as text.
    fn ir(&self) -> String {
        self.expr.ir_text()
    }

    /// The PTX kernel of this precision.
    fn ptx(&self) -> PyResult<String> {
        self.expr
            .ptx(self.eval.precision())
            .map_err(|e| to_py(e, self.expr.source()))
    }

    /// The ordinal of the device that runs the batches (None on the CPU backend).
    #[getter]
    fn device(&self) -> Option<usize> {
        self.eval
            .gpu_kernel()
            .and_then(|k| k.device_ordinals().first().copied())
    }

    /// Runs the kernel on device memory: `inputs` and `outputs` are device addresses of
    /// `2 * len(vars) * n` and `2 * outputs * n` contiguous elements of the precision's type
    /// (lower then upper bound of each variable / output). The Python layer checks the arrays
    /// (`ivjit._device`); this only launches.
    fn _eval_device(&self, py: Python<'_>, inputs: u64, outputs: u64, n: usize) -> PyResult<()> {
        let Some(kernel) = self.eval.gpu_kernel() else {
            return Err(GpuError::new_err(
                "device arrays need a GPU function: compile with backend='gpu' (or 'auto' on a GPU machine)",
            ));
        };
        // SAFETY: the Python layer passes the addresses of live, contiguous CUDA arrays of the
        // sizes above, on this kernel's device, output distinct from input.
        py.allow_threads(|| unsafe { kernel.eval_device(inputs, outputs, n) })
            .map_err(|e| to_py(ivjit::Error::Gpu(e), self.expr.source()))
    }

    /// Whether the device batch at `inputs` (the layout of `_eval_device`) holds only interval
    /// bounds; one pass on the device.
    fn _check_device(&self, py: Python<'_>, inputs: u64, n: usize) -> PyResult<bool> {
        let Some(kernel) = self.eval.gpu_kernel() else {
            return Err(GpuError::new_err("device arrays need a GPU function"));
        };
        // SAFETY: as for `_eval_device`.
        py.allow_threads(|| unsafe { kernel.check_device(inputs, n) })
            .map_err(|e| to_py(ivjit::Error::Gpu(e), self.expr.source()))
    }

    fn __repr__(&self) -> String {
        format!(
            "ivjit.compile({:?}, precision={:?}, backend={:?})",
            self.expr.source(),
            self.eval.precision().name(),
            self.eval.backend().name()
        )
    }

    /// Evaluates the batch: `f(x=(x_lo, x_hi), y=(y_lo, y_hi))`, arrays of one length n or
    /// numbers (broadcast). Returns `(lo, hi)`: arrays of shape (n,) for one output, (outputs, n)
    /// for several; an empty result is NaN in both bounds.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &pyo3::Bound<'py, PyTuple>,
        kwargs: Option<&pyo3::Bound<'py, PyDict>>,
    ) -> PyResult<(PyObject, PyObject)> {
        let vars = self.expr.vars();
        if !args.is_empty() {
            return Err(PyTypeError::new_err(format!(
                "pass the bounds by name: f({})",
                vars.iter()
                    .map(|v| format!("{v}=(lo, hi)"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let mut bounds: Vec<(Bound, Bound)> = Vec::with_capacity(vars.len());
        for v in vars {
            let Some(pair) = kwargs.and_then(|k| k.get_item(v).ok().flatten()) else {
                return Err(InputError::new_err(format!(
                    "variable {v:?} is not given: pass {v}=(lo, hi)"
                )));
            };
            let (lo, hi): (pyo3::Bound<PyAny>, pyo3::Bound<PyAny>) =
                pair.extract().map_err(|_| {
                    InputError::new_err(format!(
                        "{v}: expected a pair (lo, hi) of arrays or numbers"
                    ))
                })?;
            bounds.push((bound(py, &lo, v)?, bound(py, &hi, v)?));
        }
        if let Some(k) = kwargs {
            for key in k.keys() {
                let key: String = key.extract()?;
                if !vars.contains(&key) {
                    return Err(InputError::new_err(format!(
                        "{key:?} is not a variable of the expression (its variables: {})",
                        vars.join(", ")
                    )));
                }
            }
        }
        // The batch length: every array's, which must agree; 1 when all are numbers.
        let mut n: Option<usize> = None;
        for (v, (lo, hi)) in vars.iter().zip(&bounds) {
            for len in [lo.len(), hi.len()].into_iter().flatten() {
                match n {
                    Some(m) if m != len => {
                        return Err(InputError::new_err(format!(
                            "{v}: an array of {len} values in a batch of {m}"
                        )))
                    }
                    _ => n = Some(len),
                }
            }
        }
        let n = n.unwrap_or(1);
        let mut soa = vec![0.0; 2 * vars.len() * n];
        for (k, (lo, hi)) in bounds.iter().enumerate() {
            lo.fill(&mut soa[2 * k * n..(2 * k + 1) * n])?;
            hi.fill(&mut soa[(2 * k + 1) * n..(2 * k + 2) * n])?;
        }
        drop(bounds);
        let m = self.expr.n_outputs();
        let out = py
            .allow_threads(|| self.eval.eval_soa(&soa, n))
            .map_err(|e| to_py(e, self.expr.source()))?;
        // out: for each output j, n lower bounds then n upper bounds.
        let mut lo = Vec::with_capacity(m * n);
        let mut hi = Vec::with_capacity(m * n);
        for j in 0..m {
            lo.extend_from_slice(&out[2 * j * n..(2 * j + 1) * n]);
            hi.extend_from_slice(&out[(2 * j + 1) * n..(2 * j + 2) * n]);
        }
        if m == 1 {
            Ok((
                PyArray1::from_vec(py, lo).into_any().unbind(),
                PyArray1::from_vec(py, hi).into_any().unbind(),
            ))
        } else {
            let lo = PyArray1::from_vec(py, lo).reshape([m, n])?;
            let hi = PyArray1::from_vec(py, hi).reshape([m, n])?;
            let _: &pyo3::Bound<PyArray2<f64>> = &lo;
            Ok((lo.into_any().unbind(), hi.into_any().unbind()))
        }
    }
}

/// Compiles an expression: `compile("x^2 - y", precision="f64", backend="auto")`.
#[pyfunction]
#[pyo3(signature = (source, precision = "f64", backend = "auto"))]
fn compile(py: Python<'_>, source: &str, precision: &str, backend: &str) -> PyResult<Function> {
    let p = precision_of(precision)?;
    let b = backend_of(backend)?;
    let source = source.to_string();
    py.allow_threads(move || {
        let expr = ivjit::Expression::parse(&source).map_err(|e| (e, source.clone()))?;
        let eval = ivjit::Evaluator::new(&expr, p, b).map_err(|e| (e, source.clone()))?;
        Ok(Function { expr, eval })
    })
    .map_err(|(e, s): (ivjit::Error, String)| to_py(e, &s))
}

#[pymodule]
fn _ivjit(m: &pyo3::Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_class::<Function>()?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("SyntaxError", py.get_type::<SyntaxError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("GpuError", py.get_type::<GpuError>())?;
    Ok(())
}
