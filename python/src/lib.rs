//! `ivjit._ivjit`: the native half of the Python package (the Python half, `ivjit/__init__.py`,
//! re-exports it with type stubs).
//!
//! A compiled function holds one [`ivjit::Evaluator`]; a call gathers the NumPy bounds into the
//! evaluator's structure-of-arrays batch, runs it with the GIL released, and returns NumPy
//! arrays. Errors become Python exceptions with the library's diagnostic text (the caret
//! included), never a panic across the interpreter.

use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::create_exception;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyException, PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt};

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
/// diagnostic (the source line and a caret under the place); memory the machine does not
/// have is a `MemoryError`.
fn to_py(e: ivjit::Error, source: &str) -> PyErr {
    match e {
        ivjit::Error::Compile(d) => SyntaxError::new_err(d.render(source)),
        ivjit::Error::Search(ivjit::search::SearchError::OutOfMemory(_))
        | ivjit::Error::Gpu(ivjit::internals::gpu::GpuError::HostAlloc(_)) => {
            PyMemoryError::new_err(e.to_string())
        }
        ivjit::Error::Input { .. }
        | ivjit::Error::Shape(_)
        | ivjit::Error::Search(_)
        | ivjit::Error::Decoration(_) => InputError::new_err(e.to_string()),
        ivjit::Error::NoGpu(_) | ivjit::Error::Gpu(_) => GpuError::new_err(e.to_string()),
    }
}

/// Runs a search (`ivjit::search`) with the GIL released and Python's signal handlers run
/// between its rounds (`ivjit::search::interruptible`), the mechanism of the batches' pieces:
/// Ctrl-C stops it with `KeyboardInterrupt` (whatever exception a handler raises).
fn search<T: Send>(
    py: Python<'_>,
    source: &str,
    run: impl FnOnce() -> Result<T, ivjit::Error> + Send,
) -> PyResult<T> {
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let slot = raised.clone();
    let result = py.allow_threads(move || {
        let check = move || {
            Python::with_gil(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    true
                }
            })
        };
        ivjit::search::interruptible(check, run)
    });
    if let Some(e) = raised.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    result.map_err(|e| to_py(e, source))
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
    /// The backend asked for ("auto", "cpu", "gpu"), kept so that a pickled function compiles
    /// the same way elsewhere (a worker without a GPU falls back from "auto").
    asked_backend: String,
    /// The form asked for ("natural", "mean-value", "monotone"), kept for pickling too.
    form: String,
    /// The decorated evaluator (`Expression::parse_decorated`), made on the first
    /// `decorated` call.
    decorated: std::sync::OnceLock<ivjit::Evaluator>,
}

/// An error for a key of `bounds` that is not one of `vars`.
fn check_names(bounds: &pyo3::Bound<'_, PyDict>, vars: &[String]) -> PyResult<()> {
    for key in bounds.keys() {
        let key: String = key.extract()?;
        if !vars.contains(&key) {
            return Err(InputError::new_err(format!(
                "{key:?} is not a variable of the expression (its variables: {})",
                vars.join(", ")
            )));
        }
    }
    Ok(())
}

/// One output of a decorated evaluation: its lower bounds, upper bounds and decoration codes.
type DecoratedArrays<'py> = (
    pyo3::Bound<'py, PyAny>,
    pyo3::Bound<'py, PyAny>,
    pyo3::Bound<'py, PyAny>,
);

/// Boxes per piece of a batch on the CPU backend: between pieces the call checks for Ctrl-C
/// and reports progress (about 50 ms for `x^2 - y` on two cores; longer expressions take
/// longer per piece).
const CPU_PIECE: usize = 1 << 20;
/// Boxes per piece on the GPU backend, where a piece costs a few milliseconds of copies.
const GPU_PIECE: usize = 1 << 22;

/// Integers up to this magnitude are exact in float64; larger ones would round to nearest.
const EXACT_INT: f64 = 9_007_199_254_740_992.0; // 2^53

/// One bound of one variable: an array read where it is, or a number broadcast.
enum Bound<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
    Scalar(f64),
}

impl Bound<'_> {
    fn len(&self) -> Option<usize> {
        match self {
            Bound::F64(a) => Some(a.len()),
            Bound::F32(a) => Some(a.len()),
            Bound::Scalar(_) => None,
        }
    }
}

/// A bound as the evaluator takes it: C-contiguous float64 and float32 arrays as they are;
/// numbers as numbers (Python and NumPy floats and integers: an integer that is not a double
/// is rounded outward, down for a lower bound and up for an upper one, `upper`); other arrays
/// converted by NumPy (a copy) where the conversion is exact (smaller floats, integers up to
/// 2^53, booleans) and refused otherwise, since rounding a bound to nearest could shrink the
/// box.
fn bound<'py>(
    py: Python<'py>,
    value: &pyo3::Bound<'py, PyAny>,
    what: &str,
    upper: bool,
) -> PyResult<Bound<'py>> {
    if let Ok(x) = value.downcast::<pyo3::types::PyFloat>() {
        return Ok(Bound::Scalar(x.value()));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(Bound::Scalar(int_bound(value, upper)?));
    }
    if let Ok(a) = value.downcast::<PyArray1<f64>>() {
        if a.is_contiguous() {
            return Ok(Bound::F64(
                a.try_readonly()
                    .map_err(|e| InputError::new_err(format!("{what}: {e}")))?,
            ));
        }
    }
    if let Ok(a) = value.downcast::<PyArray1<f32>>() {
        if a.is_contiguous() {
            return Ok(Bound::F32(
                a.try_readonly()
                    .map_err(|e| InputError::new_err(format!("{what}: {e}")))?,
            ));
        }
    }
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (value,))?;
    let dtype = arr.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let size: usize = dtype.getattr("itemsize")?.extract()?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim == 0 {
        // A NumPy scalar (np.int64(3), np.float32(0.5)) or a 0-d array: a number.
        let item = arr.call_method0("item")?;
        return match kind.as_str() {
            "i" | "u" | "b" => Ok(Bound::Scalar(int_bound(&item, upper)?)),
            "f" if size <= 8 => Ok(Bound::Scalar(item.extract::<f64>()?)),
            _ => Err(InputError::new_err(format!(
                "{what}: a bound of dtype {} cannot be converted to float64 exactly; give a \
                 float or an integer (rounded outward yourself: lower bounds down, upper bounds up)",
                dtype.str()?
            ))),
        };
    }
    let exact = match kind.as_str() {
        "f" => size <= 8,
        "b" => true,
        "i" | "u" => {
            let big = arr.getattr("size")?.extract::<usize>()? > 0 && {
                let m = np.call_method1("abs", (&arr,))?.call_method0("max")?;
                m.extract::<f64>().map_or(true, |m| m > EXACT_INT)
            };
            !big
        }
        _ => false,
    };
    if !exact {
        return Err(InputError::new_err(format!(
            "{what}: bounds of dtype {} cannot be converted to float64 exactly; give float64 or \
             float32 arrays (rounded outward yourself: lower bounds down, upper bounds up)",
            dtype.str()?
        )));
    }
    if ndim != 1 {
        return Err(InputError::new_err(format!(
            "{what}: expected a 1-D array or a number"
        )));
    }
    let arr = np.call_method1("ascontiguousarray", (arr, "float64"))?;
    Ok(Bound::F64(arr.downcast_into::<PyArray1<f64>>()?.readonly())) // fresh: free
}

/// A Python integer (`bool` included) as a bound: the double equal to it, else the nearest
/// double below it (`upper` false) or above it (`upper` true); beyond the doubles, the largest
/// finite one or infinity on the side that still holds it.
fn int_bound(value: &pyo3::Bound<'_, PyAny>, upper: bool) -> PyResult<f64> {
    let f = match value.extract::<f64>() {
        Ok(f) => f,
        // Too large for a double: an infinity of its sign, stepped inward below if need be.
        Err(_) if value.gt(0)? => f64::INFINITY,
        Err(_) => f64::NEG_INFINITY,
    };
    // Python compares integers and floats exactly.
    Ok(if upper && value.gt(f)? {
        ivjit::internals::round::next_up(f)
    } else if !upper && value.lt(f)? {
        ivjit::internals::round::next_down(f)
    } else {
        f
    })
}

/// The outputs: `out=(lo, hi)` checked, or fresh arrays; float64, C-contiguous, of shape (n,)
/// for one output and (outputs, n) for several.
fn outputs<'py>(
    py: Python<'py>,
    out: Option<&pyo3::Bound<'py, PyAny>>,
    m: usize,
    n: usize,
) -> PyResult<(pyo3::Bound<'py, PyAny>, pyo3::Bound<'py, PyAny>)> {
    let shape: Vec<usize> = if m == 1 { vec![n] } else { vec![m, n] };
    let Some(out) = out else {
        // More than the machine has is refused up front: where the system overcommits, NumPy
        // would hand out the address space and the batch would be killed writing to it.
        let bytes = 2 * 8 * m as u128 * n as u128;
        if ivjit::internals::gpu::machine_memory().is_some_and(|total| bytes > total) {
            return Err(PyMemoryError::new_err(format!(
                "cannot allocate the outputs, 2 arrays of shape {shape:?} ({bytes} bytes): \
                 more than the machine's memory"
            )));
        }
        return Ok((zeros(py, &shape)?, zeros(py, &shape)?));
    };
    let (lo, hi): (pyo3::Bound<PyAny>, pyo3::Bound<PyAny>) = out
        .extract()
        .map_err(|_| InputError::new_err("out: expected a pair (lo, hi) of float64 arrays"))?;
    for (name, a) in [("out[0]", &lo), ("out[1]", &hi)] {
        let ok = a
            .downcast::<PyArrayDyn<f64>>()
            .is_ok_and(|a| a.is_c_contiguous() && a.shape() == shape.as_slice());
        if !ok {
            return Err(InputError::new_err(format!(
                "{name}: expected a writeable C-contiguous float64 array of shape {shape:?}"
            )));
        }
    }
    if lo.is(&hi) {
        return Err(InputError::new_err("out: lo and hi must be two arrays"));
    }
    Ok((lo, hi))
}

/// A float64 array of zeros of `shape` made by NumPy: `MemoryError` (or NumPy's `ValueError`
/// for a size that overflows) where it cannot be had, never a panic (`PyArray::zeros` panics
/// on the null NumPy returns then).
fn zeros<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<pyo3::Bound<'py, PyAny>> {
    use numpy::npyffi::{npy_intp, PY_ARRAY_API};
    use numpy::{Element, PyArrayDescrMethods};
    let mut dims = shape
        .iter()
        .map(|&d| npy_intp::try_from(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| PyValueError::new_err(format!("an array of shape {shape:?} is too big")))?;
    let dtype = f64::get_dtype(py).into_dtype_ptr();
    // SAFETY: `dims` holds `dims.len()` dimensions; PyArray_Zeros steals the reference to the
    // descriptor that into_dtype_ptr made, and returns a new reference or null with an
    // exception set.
    unsafe {
        let ptr = PY_ARRAY_API.PyArray_Zeros(py, dims.len() as i32, dims.as_mut_ptr(), dtype, 0);
        pyo3::Bound::from_owned_ptr_or_err(py, ptr)
    }
}

/// `len` copies of `x`: `MemoryError` where they cannot be had.
fn filled(x: f64, len: usize) -> PyResult<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        PyMemoryError::new_err(format!(
            "cannot allocate {len} float64 values: out of memory"
        ))
    })?;
    v.resize(len, x);
    Ok(v)
}

impl Function {
    /// The choice a search compiled again from this function's source is made with: where the
    /// function runs (a GPU function made with `auto` stays `auto`, so that the searches may
    /// run their small rounds on the CPU: `ivjit::search::minimize`).
    fn same_backend(&self) -> ivjit::BackendChoice {
        match self.eval.backend() {
            ivjit::Backend::Cpu => ivjit::BackendChoice::Cpu,
            ivjit::Backend::Gpu => self.eval.choice(),
        }
    }
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

    /// Runs the kernel on device memory: `inputs` and `outputs` are the device addresses of
    /// the `2 * len(vars)` and `2 * outputs` arrays (lo then hi of each variable / output) of n
    /// contiguous elements of the precision's type. Returns whether every input pair was an
    /// interval bound (checked in the same pass; when not, the outputs mean nothing). The
    /// Python layer (`ivjit._device`) makes the arrays; this only launches.
    fn _eval_device(
        &self,
        py: Python<'_>,
        inputs: Vec<u64>,
        outputs: Vec<u64>,
        n: usize,
    ) -> PyResult<bool> {
        let Some(kernel) = self.eval.gpu_kernel() else {
            return Err(GpuError::new_err(
                "device arrays need a GPU function: compile with backend='gpu' (or 'auto' on a GPU machine)",
            ));
        };
        // SAFETY: the Python layer passes the addresses of live, contiguous CUDA arrays of n
        // elements of the kernel's type on this kernel's device, outputs fresh and distinct.
        py.allow_threads(|| unsafe { kernel.eval_device(&inputs, &outputs, n) })
            .map_err(|e| to_py(ivjit::Error::Gpu(e), self.expr.source()))
    }

    /// Classifies every pixel of a width x height image over `region` (x0, x1, y0, y1) by
    /// subdivision through tiles of the given sizes: `ivjit::search::render`. Returns the
    /// classes (row 0 at the top) as a (height, width) uint8 array, and per round (tile size,
    /// boxes, inside, outside, boundary). Pruned (`ivjit::search::PrunedRender`: per-tile
    /// pruned tapes run by the interpreter on the function's backend) when `prune` is true,
    /// and by default (`None`) where `ivjit::search::default_pruned` says it pays.
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (width, height, region, tiles, prune = None))]
    fn _render<'py>(
        &self,
        py: Python<'py>,
        width: u32,
        height: u32,
        region: [f64; 4],
        tiles: Vec<u32>,
        prune: Option<bool>,
    ) -> PyResult<(pyo3::Bound<'py, PyAny>, Vec<(u32, u64, u64, u64, u64)>)> {
        let mut opts = ivjit::search::RenderOptions::new(width, height, region);
        let chosen = !tiles.is_empty();
        if chosen {
            opts.tiles = tiles;
        }
        let image = py
            .allow_threads(|| {
                // The library's one pruned path: tapes run by the interpreter on the function's
                // backend. By default only where it pays (`search::default_pruned`).
                use ivjit::search::{default_pruned, PrunedRender};
                let (p, backend) = (self.eval.precision(), self.eval.backend());
                let pruned = match prune {
                    Some(true) => Some(PrunedRender::new(&self.expr, p, backend)?),
                    Some(false) => None,
                    None => default_pruned(&self.expr, p, backend == ivjit::Backend::Gpu),
                };
                match pruned {
                    Some(r) => {
                        if !chosen {
                            opts.tiles = r.default_tiles(width, height);
                        }
                        r.render(&opts).map(|(image, _)| image)
                    }
                    None => ivjit::search::render(&self.eval, &opts),
                }
            })
            .map_err(|e| to_py(e, self.expr.source()))?;
        let rounds = image
            .rounds
            .iter()
            .map(|r| (r.tile, r.boxes, r.inside, r.outside, r.boundary))
            .collect();
        let classes = PyArray1::from_vec(py, image.classes)
            .reshape([height as usize, width as usize])?
            .into_any();
        Ok((classes, rounds))
    }

    /// A depth map of the surface f(x, y, z) = 0 seen from above. With `voxels`, by
    /// `ivjit::search::voxels` on the function's backend (width x height x steps voxels, tiles
    /// of `tiles`, default 64, 16, 4, 1), the tops of each column's highest voxel not proven
    /// outside. Else `ivjit::search::ray::DepthMap`
    /// with the ray rule on the function's backend, or with `prune` the pruned blocks of rays
    /// on the CPU (`ivjit::search::prune::first_hits_pruned`, blocks of `tiles`); by default
    /// (`None`) pruned where the function runs on the CPU and has a min or max, as `ivjit
    /// render` does. Returns the heights as a (height, width) float64 array, NaN where a line
    /// misses the surface.
    #[allow(clippy::too_many_arguments)]
    /// With `normals` (voxels only), also each column's certified unit normal as a (height,
    /// width, 3) float64 array, NaN where none is proven: `render_with_normals` where the
    /// tapes' derivative rules cover the expression, else f's gradient program.
    #[pyo3(signature = (width, height, region, zrange, steps, prune = None, tiles = Vec::new(), voxels = false, normals = false))]
    fn _depth<'py>(
        &self,
        py: Python<'py>,
        width: u32,
        height: u32,
        region: [f64; 4],
        zrange: (f64, f64),
        steps: usize,
        prune: Option<bool>,
        tiles: Vec<u32>,
        voxels: bool,
        normals: bool,
    ) -> PyResult<pyo3::Bound<'py, PyAny>> {
        if voxels {
            use ivjit::search::tape::TapeBackend;
            use ivjit::search::voxels::{VoxelOptions, VoxelRenderer};
            let heights = py
                .allow_threads(|| {
                    let f = ivjit::Expression::parse(self.expr.source())?;
                    let [x0, x1, y0, y1] = region;
                    let depth = u32::try_from(steps).unwrap_or(u32::MAX);
                    let mut opts = VoxelOptions::new(
                        width,
                        height,
                        depth,
                        [x0, x1, y0, y1, zrange.0, zrange.1],
                    );
                    if !tiles.is_empty() {
                        opts.tiles = tiles;
                    }
                    let backend = match self.eval.backend() {
                        ivjit::Backend::Cpu => TapeBackend::Cpu,
                        ivjit::Backend::Gpu => TapeBackend::Gpu,
                    };
                    let r = VoxelRenderer::new(&f, self.eval.precision(), backend)?;
                    if !normals {
                        return Ok::<_, ivjit::Error>((r.render(&opts)?.0.tops(zrange), None));
                    }
                    let (map, n) = if r.differentiates() {
                        let (map, n, _) = r.render_with_normals(&opts)?;
                        (map, n)
                    } else {
                        let (map, _) = r.render(&opts)?;
                        let (g, _) = f.gradient()?;
                        let ge =
                            ivjit::Evaluator::new(&g, self.eval.precision(), self.same_backend())?;
                        let n = r.normals(&ge, &map, &opts)?;
                        (map, n)
                    };
                    let flat: Vec<f64> =
                        n.iter().flat_map(|v| v.unwrap_or([f64::NAN; 3])).collect();
                    Ok((map.tops(zrange), Some(flat)))
                })
                .map_err(|e| to_py(e, self.expr.source()))?;
            let (heights, normals) = heights;
            let (h, w) = (height as usize, width as usize);
            let heights = PyArray1::from_vec(py, heights).reshape([h, w])?.into_any();
            return match normals {
                None => Ok(heights),
                Some(n) => {
                    let n = PyArray1::from_vec(py, n).reshape([h, w, 3])?.into_any();
                    Ok(pyo3::types::PyTuple::new(py, [heights, n])?.into_any())
                }
            };
        }
        let map = ivjit::search::ray::DepthMap {
            width,
            height,
            region,
            zrange,
            steps,
        };
        let heights = py
            .allow_threads(|| {
                let f = ivjit::Expression::parse(self.expr.source())?;
                let along = map.along_rays(&f)?;
                let p = self.eval.precision();
                let prune = prune.unwrap_or_else(|| {
                    self.eval.backend() == ivjit::Backend::Cpu && ivjit::search::prunes(&along)
                });
                let hits = if prune {
                    let blocks = if tiles.is_empty() { vec![32, 8] } else { tiles };
                    let rays = map.rays()?;
                    ivjit::search::prune::first_hits_pruned(&along, p, &rays, width, &blocks, 8)?.0
                } else {
                    let b = self.same_backend();
                    let eval = ivjit::Evaluator::new(&along, p, b)?;
                    // The rays made by the search (on a GPU, by the device).
                    map.first_hits(&eval, 8)?
                };
                Ok::<_, ivjit::Error>(map.heights(&hits.hits))
            })
            .map_err(|e| to_py(e, self.expr.source()))?;
        Ok(PyArray1::from_vec(py, heights)
            .reshape([height as usize, width as usize])?
            .into_any())
    }

    /// A closed triangle mesh of f(x, y, z) = 0 over `region` (`ivjit::search::mesh::mesh`,
    /// with `normals` `mesh_with_normals` and f's gradient) on the function's backend:
    /// (vertices as a (V, 3) float64 array, triangles as a (T, 3) uint32 array of vertex
    /// indices, counted outward, the search's counts by name, and with `normals` the (V, 3)
    /// normals and a (V,) bool array of which are certain).
    #[allow(clippy::type_complexity)]
    fn _mesh<'py>(
        &self,
        py: Python<'py>,
        depth: u32,
        region: [f64; 6],
        witness_levels: u32,
        bisections: u32,
        normals: bool,
    ) -> PyResult<(
        pyo3::Bound<'py, PyAny>,
        pyo3::Bound<'py, PyAny>,
        Vec<(&'static str, u64)>,
        Option<(pyo3::Bound<'py, PyAny>, pyo3::Bound<'py, PyAny>)>,
    )> {
        let opts = ivjit::search::mesh::MeshOptions {
            depth,
            region,
            witness_levels,
            bisections,
        };
        let m = search(py, self.expr.source(), || {
            if normals {
                let (g, _) = self.expr.gradient()?;
                let grad = ivjit::Evaluator::new(&g, self.eval.precision(), self.same_backend())?;
                ivjit::search::mesh::mesh_with_normals(&self.eval, &grad, &opts)
            } else {
                ivjit::search::mesh::mesh(&self.eval, &opts)
            }
        })?;
        let s = &m.stats;
        let stats = vec![
            ("cells", s.cells),
            ("outside_cells", s.outside_cells),
            ("inside_cells", s.inside_cells),
            ("boundary_cells", s.boundary_cells),
            ("cell_witnesses", s.cell_witnesses),
            ("face_witnesses", s.face_witnesses),
            ("edge_witnesses", s.edge_witnesses),
            ("uncertain", s.uncertain),
            ("unproven_samples", s.unproven_samples),
            ("evaluations", s.evaluations),
            ("certain_cells", s.certain_cells),
            ("uncertain_normals", s.uncertain_normals),
        ];
        let normals = if normals {
            let nv = m.normals.len();
            let n = PyArray1::from_vec(py, m.normals.into_iter().flatten().collect())
                .reshape([nv, 3])?
                .into_any();
            let certain = PyArray1::from_vec(py, m.normal_certain).into_any();
            Some((n, certain))
        } else {
            None
        };
        let nv = m.vertices.len();
        let nt = m.triangles.len();
        let vertices = PyArray1::from_vec(py, m.vertices.into_iter().flatten().collect())
            .reshape([nv, 3])?
            .into_any();
        let triangles = PyArray1::from_vec(py, m.triangles.into_iter().flatten().collect())
            .reshape([nt, 3])?
            .into_any();
        Ok((vertices, triangles, stats, normals))
    }

    /// A camera frame of the surface f(x, y, z) = 0: `ivjit::search::trace::trace` with the
    /// camera `Camera::look_at(eye, center, fov)` and the rays clipped to the ball (`scene`,
    /// `radius`), on the function's precision and backend. Returns (hits, rgb, boxes): hits a
    /// (height, width, 2) float64 array of each pixel's first candidate root [t_lo, t_hi] along
    /// its ray (NaN where the ray misses), or None without `with_hits` (`trace_image`: on a GPU
    /// the hits stay on the device), rgb a (height, width, 3) uint8 image. Ctrl-C stops it
    /// between rounds (`search`).
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn _trace<'py>(
        &self,
        py: Python<'py>,
        width: usize,
        height: usize,
        eye: [f64; 3],
        center: [f64; 3],
        fov: f64,
        scene: [f64; 3],
        radius: f64,
        steps: usize,
        split: u32,
        with_hits: bool,
    ) -> PyResult<(Option<pyo3::Bound<'py, PyAny>>, pyo3::Bound<'py, PyAny>, u64)> {
        use ivjit::search::trace::{ray_expression, trace, trace_image, Camera, Frame, View};
        let source = self.expr.source();
        let cam = Camera::look_at(eye, center, fov).map_err(PyValueError::new_err)?;
        let frame = search(py, source, || {
            let ray = ivjit::Expression::parse(&ray_expression(source, &cam))?;
            let b = self.same_backend();
            let ray = ivjit::Evaluator::new(&ray, self.eval.precision(), b)?;
            let view = View {
                width,
                height,
                center: scene,
                radius,
                steps,
                split,
            };
            if with_hits {
                trace(&ray, &self.eval, &cam, &view)
            } else {
                trace_image(&ray, &self.eval, &cam, &view).map(Frame::from)
            }
        })?;
        let hits = if with_hits {
            let flat: Vec<f64> = frame
                .hits
                .iter()
                .flat_map(|h| match h {
                    Some((lo, hi)) => [*lo, *hi],
                    None => [f64::NAN; 2],
                })
                .collect();
            Some(
                PyArray1::from_vec(py, flat)
                    .reshape([height, width, 2])?
                    .into_any(),
            )
        } else {
            None
        };
        let rgb = PyArray1::from_vec(py, frame.rgb)
            .reshape([height, width, 3])?
            .into_any();
        Ok((hits, rgb, frame.boxes))
    }

    /// Branch and bound for a certified enclosure of the minimum over `root` (one (lo, hi)
    /// per variable): `ivjit::search::minimize::minimize`. Returns (lower, upper, argmin,
    /// stopped, rounds, boxes, remaining). Ctrl-C stops it between rounds (`search`).
    ///
    /// With `gradient`, f (compiled again from its source) is evaluated in the minimization
    /// form over `root` (`Expression::minimization_form`: the mean-value form with the
    /// monotonicity test and gradient-based exclusion) and a local descent improves the upper
    /// bound (`search::minimize::minimize_with`), on the same precision and backend.
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (root, tol, max_boxes, gradient = false))]
    fn _minimize(
        &self,
        py: Python<'_>,
        root: Vec<(f64, f64)>,
        tol: f64,
        max_boxes: u64,
        gradient: bool,
    ) -> PyResult<(f64, f64, Vec<f64>, &'static str, usize, u64, usize, usize)> {
        let m = search(py, self.expr.source(), || {
            if !gradient {
                return ivjit::search::minimize::minimize(&self.eval, &root, tol, max_boxes);
            }
            let f = ivjit::Expression::parse(self.expr.source())?;
            let b = self.same_backend();
            use ivjit::search::minimize::{Form, Minimizer};
            Minimizer::new(&f, &root, Form::Gradient, true, self.eval.precision(), b)?
                .run(tol, max_boxes)
        })?;
        use ivjit::search::minimize::Ended;
        let stopped = match m.ended {
            Ended::Done => "converged",
            Ended::Budget => "budget",
            Ended::Memory => "memory",
            Ended::Rounds => "rounds",
        };
        Ok((
            m.lower,
            m.upper,
            m.argmin,
            stopped,
            m.rounds,
            m.boxes,
            m.remaining,
            m.gpu_rounds,
        ))
    }

    /// Every box of `root` where f may equal `level`, to `tol`:
    /// `ivjit::search::exclude::exclude`. Returns (boxes, unfinished, ended, rounds,
    /// evaluated), the boxes as (count, vars, 2) float64 arrays in sorted order. Ctrl-C stops
    /// it between rounds (`search`).
    #[allow(clippy::type_complexity)]
    fn _exclude<'py>(
        &self,
        py: Python<'py>,
        root: Vec<(f64, f64)>,
        level: f64,
        tol: f64,
        max_boxes: u64,
    ) -> PyResult<(
        pyo3::Bound<'py, PyAny>,
        pyo3::Bound<'py, PyAny>,
        &'static str,
        usize,
        u64,
    )> {
        let s = search(py, self.expr.source(), || {
            ivjit::search::exclude::exclude(&self.eval, &root, level, tol, max_boxes).map(
                |mut s| {
                    s.boxes.sort();
                    s.unfinished.sort();
                    s
                },
            )
        })?;
        use ivjit::search::exclude::Ended;
        let ended = match s.ended {
            Ended::Done => "done",
            Ended::Budget => "budget",
            Ended::Memory => "memory",
            Ended::Rounds => "rounds",
        };
        let nv = root.len();
        let array = |b: &ivjit::search::exclude::Boxes| -> PyResult<pyo3::Bound<'py, PyAny>> {
            let flat: Vec<f64> = b.sides.iter().flat_map(|&(l, h)| [l, h]).collect();
            Ok(PyArray1::from_vec(py, flat)
                .reshape([b.len(), nv, 2])?
                .into_any())
        };
        Ok((
            array(&s.boxes)?,
            array(&s.unfinished)?,
            ended,
            s.rounds,
            s.evaluated,
        ))
    }

    /// The common zeros of the outputs (a square system) in `root`, to `tol`, with interval
    /// Newton: `ivjit::search::newton::isolate` (f compiled again from its source, in its
    /// precision f64 and on its backend). Returns (boxes as a (count, vars, 2) float64 array,
    /// unique flags, ended, evaluated, newton steps). Ctrl-C stops it between rounds, batches of
    /// Krawczyk steps and parts of the clustering (`search`).
    #[allow(clippy::type_complexity)]
    fn _solve<'py>(
        &self,
        py: Python<'py>,
        root: Vec<(f64, f64)>,
        tol: f64,
        max_boxes: u64,
    ) -> PyResult<(pyo3::Bound<'py, PyAny>, Vec<bool>, &'static str, u64, usize)> {
        let found = search(py, self.expr.source(), || {
            let f = ivjit::Expression::parse(self.expr.source())?;
            let b = self.same_backend();
            ivjit::search::newton::Solver::new(&f, b)?.isolate(&root, tol, max_boxes)
        })?;
        use ivjit::search::exclude::Ended;
        let ended = match found.ended {
            Ended::Done => "done",
            Ended::Budget => "budget",
            Ended::Memory => "memory",
            Ended::Rounds => "rounds",
        };
        let flat: Vec<f64> = found
            .zeros
            .iter()
            .flat_map(|z| z.sides.iter().flat_map(|&(l, h)| [l, h]))
            .collect();
        let boxes = PyArray1::from_vec(py, flat)
            .reshape([found.zeros.len(), root.len(), 2])?
            .into_any();
        let unique = found.zeros.iter().map(|z| z.unique).collect();
        Ok((boxes, unique, ended, found.evaluated, found.newton_steps))
    }

    fn __repr__(&self) -> String {
        format!(
            "ivjit.compile({:?}, precision={:?}, backend={:?})",
            self.expr.source(),
            self.eval.precision().name(),
            self.eval.backend().name()
        )
    }

    /// The source text it was compiled from.
    #[getter]
    fn source(&self) -> &str {
        self.expr.source()
    }

    /// The backend asked for at compile time ("auto", "cpu" or "gpu").
    #[getter]
    fn _asked_backend(&self) -> &str {
        &self.asked_backend
    }

    /// The form asked for at compile time ("natural", "mean-value" or "monotone").
    #[getter]
    fn form(&self) -> &str {
        &self.form
    }

    /// IEEE 1788 decorated evaluation: `bounds` maps each variable to `(lo, hi)` or `(lo, hi,
    /// dec)`, arrays of one length or numbers; `dec` a decoration's code (16 com, 12 dac, 8
    /// def, 4 trv, 0 ill) or name, per box or for all (without it, the box's `newDec`).
    /// Returns per output `(lo, hi, dec)`: float64, float64 and uint8 arrays (NaI: NaN bounds
    /// and 0). Runs box by box through `Evaluator::eval_decorated`.
    fn _eval_decorated<'py>(
        &self,
        py: Python<'py>,
        bounds: &pyo3::Bound<'py, PyDict>,
    ) -> PyResult<Vec<DecoratedArrays<'py>>> {
        use ivjit::{DecoratedInterval, Decoration, Interval};
        let vars = self.expr.vars();
        check_names(bounds, vars)?;
        // Per variable: lo, hi (one value or one per box) and the decorations given, if any.
        type Column = Vec<f64>;
        let mut columns: Vec<(Column, Column, Option<Vec<Decoration>>)> = Vec::new();
        let values = |v: &pyo3::Bound<'py, PyAny>, name: &str| -> PyResult<Column> {
            if let Ok(x) = v.extract::<f64>() {
                return Ok(vec![x]);
            }
            v.extract::<Vec<f64>>().map_err(|_| {
                InputError::new_err(format!("{name}: expected numbers or a 1-D array of floats"))
            })
        };
        let decoration = |v: &pyo3::Bound<'py, PyAny>, name: &str| -> PyResult<Vec<Decoration>> {
            let one = |d: &pyo3::Bound<'py, PyAny>| -> PyResult<Decoration> {
                let found = if let Ok(text) = d.extract::<String>() {
                    Decoration::from_name(&text)
                } else {
                    d.extract::<u8>().ok().and_then(Decoration::from_code)
                };
                found.ok_or_else(|| {
                    InputError::new_err(format!(
                        "{name}: a decoration is com, dac, def, trv or ill, or its code 16, 12, \
                         8, 4, 0"
                    ))
                })
            };
            if v.extract::<String>().is_ok() || v.extract::<u8>().is_ok() {
                return Ok(vec![one(v)?]);
            }
            v.try_iter()?.map(|d| one(&d?)).collect()
        };
        for v in vars {
            let Some(item) = bounds.get_item(v)? else {
                return Err(InputError::new_err(format!(
                    "variable {v:?} is not given: pass {v}=(lo, hi) or (lo, hi, dec)"
                )));
            };
            let parts: Vec<pyo3::Bound<'py, PyAny>> = item
                .try_iter()
                .and_then(|it| it.collect::<PyResult<Vec<_>>>())
                .map_err(|_| {
                    InputError::new_err(format!("{v}: expected (lo, hi) or (lo, hi, dec)"))
                })?;
            if !(2..=3).contains(&parts.len()) {
                return Err(InputError::new_err(format!(
                    "{v}: expected (lo, hi) or (lo, hi, dec), not {} items",
                    parts.len()
                )));
            }
            let dec = parts.get(2).map(|d| decoration(d, v)).transpose()?;
            columns.push((values(&parts[0], v)?, values(&parts[1], v)?, dec));
        }
        let mut n: Option<usize> = None;
        for (v, (lo, hi, dec)) in vars.iter().zip(&columns) {
            let lens = [Some(lo.len()), Some(hi.len()), dec.as_ref().map(Vec::len)];
            for len in lens.into_iter().flatten().filter(|&l| l != 1) {
                match n {
                    Some(m) if m != len => {
                        return Err(InputError::new_err(format!(
                            "{v}: {len} values in a batch of {m}"
                        )))
                    }
                    _ => n = Some(len),
                }
            }
        }
        let n = n.unwrap_or(1);
        let at = |c: &Column, i: usize| if c.len() == 1 { c[0] } else { c[i] };
        let mut boxes: Vec<Vec<DecoratedInterval>> = Vec::with_capacity(n);
        for i in 0..n {
            let mut row = Vec::with_capacity(vars.len());
            for (v, (lo, hi, dec)) in vars.iter().zip(&columns) {
                let (l, h) = (at(lo, i), at(hi, i));
                let iv = if l.is_nan() && h.is_nan() {
                    Interval::EMPTY
                } else {
                    Interval::new(l, h)
                        .map_err(|e| InputError::new_err(format!("{v}, box {i}: {e}")))?
                };
                row.push(match dec {
                    None => DecoratedInterval::undecorated(iv),
                    Some(d) => {
                        let d = if d.len() == 1 { d[0] } else { d[i] };
                        DecoratedInterval::new(iv, d)
                            .map_err(|e| InputError::new_err(format!("{v}, box {i}: {e}")))?
                    }
                });
            }
            boxes.push(row);
        }
        let source = self.expr.source().to_string();
        let eval = match self.decorated.get() {
            Some(e) => e,
            None => {
                let p = self.eval.precision();
                let b = self.same_backend();
                let made = py
                    .allow_threads(|| {
                        let expr = ivjit::Expression::parse_decorated(&source)?;
                        ivjit::Evaluator::new(&expr, p, b)
                    })
                    .map_err(|e| to_py(e, &source))?;
                let _ = self.decorated.set(made);
                self.decorated.get().expect("just set")
            }
        };
        let rows = py
            .allow_threads(|| eval.eval_decorated(&boxes))
            .map_err(|e| to_py(e, &source))?;
        let m = self.expr.n_outputs();
        let mut out = Vec::with_capacity(m);
        // Output j's lower or upper bounds, NaN for the empty set (and NaI).
        let bounds = |j: usize, upper: bool| -> Vec<f64> {
            rows.iter()
                .map(|r| match (r[j].interval.is_empty(), upper) {
                    (true, _) => f64::NAN,
                    (false, false) => r[j].interval.lo,
                    (false, true) => r[j].interval.hi,
                })
                .collect()
        };
        for j in 0..m {
            let (lo, hi) = (bounds(j, false), bounds(j, true));
            let dec: Vec<u8> = rows.iter().map(|r| r[j].decoration.code()).collect();
            out.push((
                PyArray1::from_vec(py, lo).into_any(),
                PyArray1::from_vec(py, hi).into_any(),
                PyArray1::from_vec(py, dec).into_any(),
            ));
        }
        Ok(out)
    }

    /// Evaluates the batch `bounds` ({name: (lo, hi)}): arrays of one length n or numbers
    /// (broadcast). Returns `(lo, hi)`: arrays of shape (n,) for one output, (outputs, n) for
    /// several (`out`, when given, filled and returned); an empty result is NaN in both bounds.
    /// Float64 and float32 arrays are read where they are. The batch runs with the GIL
    /// released, in pieces: between pieces Ctrl-C stops it (KeyboardInterrupt) and
    /// `progress(done, n)` is called.
    #[pyo3(signature = (bounds, out = None, progress = None))]
    fn _eval<'py>(
        &self,
        py: Python<'py>,
        bounds: &pyo3::Bound<'py, PyDict>,
        out: Option<&pyo3::Bound<'py, PyAny>>,
        progress: Option<&pyo3::Bound<'py, PyAny>>,
    ) -> PyResult<(pyo3::Bound<'py, PyAny>, pyo3::Bound<'py, PyAny>)> {
        let vars = self.expr.vars();
        check_names(bounds, vars)?;
        let mut pairs: Vec<(Bound, Bound)> = Vec::with_capacity(vars.len());
        for v in vars {
            let Some(pair) = bounds.get_item(v)? else {
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
            pairs.push((bound(py, &lo, v, false)?, bound(py, &hi, v, true)?));
        }
        // The batch length: every array's, which must agree; 1 when all are numbers.
        let mut n: Option<usize> = None;
        for (v, (lo, hi)) in vars.iter().zip(&pairs) {
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
        // Only numbers: the length of `out`, else one box.
        let n = match (n, out) {
            (Some(n), _) => n,
            (None, Some(out)) => out
                .get_item(0)
                .and_then(|lo| lo.getattr("shape"))
                .and_then(|s| s.get_item(-1))
                .and_then(|len| len.extract::<usize>())
                .unwrap_or(1),
            (None, None) => 1,
        };
        let piece = match self.eval.backend() {
            ivjit::Backend::Gpu => GPU_PIECE,
            ivjit::Backend::Cpu => CPU_PIECE,
        };
        // Numbers broadcast over a piece: the one copy a call makes of its inputs.
        let bounds: Vec<&Bound> = pairs.iter().flat_map(|(lo, hi)| [lo, hi]).collect();
        let broadcast: Vec<Option<Vec<f64>>> = bounds
            .iter()
            .map(|b| match b {
                Bound::Scalar(x) => filled(*x, n.min(piece)).map(Some),
                _ => Ok(None),
            })
            .collect::<PyResult<_>>()?;
        let columns: Vec<ivjit::Column> = bounds
            .iter()
            .zip(&broadcast)
            .map(|(b, filled)| match (b, filled) {
                (Bound::F64(a), _) => a.as_slice().map(ivjit::Column::F64),
                (Bound::F32(a), _) => a.as_slice().map(ivjit::Column::F32),
                (Bound::Scalar(_), Some(v)) => Ok(ivjit::Column::F64(v)),
                (Bound::Scalar(_), None) => unreachable!("every number is broadcast above"),
            })
            .collect::<Result<_, _>>()
            .map_err(|e| InputError::new_err(e.to_string()))?;
        let m = self.expr.n_outputs();
        let (lo_obj, hi_obj) = outputs(py, out, m, n)?;
        let borrow = |a: &pyo3::Bound<'py, PyAny>| {
            let a = a.downcast::<PyArrayDyn<f64>>()?;
            a.try_readwrite().map_err(|e| {
                InputError::new_err(format!(
                    "out: {e} (the output arrays must be writeable and distinct from the inputs)"
                ))
            })
        };
        let (mut lo_w, mut hi_w) = (borrow(&lo_obj)?, borrow(&hi_obj)?);
        let lo_all = lo_w
            .as_slice_mut()
            .map_err(|e| InputError::new_err(e.to_string()))?;
        let hi_all = hi_w
            .as_slice_mut()
            .map_err(|e| InputError::new_err(e.to_string()))?;
        let mut done = 0;
        while done < n {
            let end = n.min(done + piece);
            let part: Vec<ivjit::Column> = columns
                .iter()
                .zip(&broadcast)
                .map(|(c, filled)| match (*c, filled) {
                    (_, Some(v)) => ivjit::Column::F64(&v[..end - done]),
                    (ivjit::Column::F64(s), None) => ivjit::Column::F64(&s[done..end]),
                    (ivjit::Column::F32(s), None) => ivjit::Column::F32(&s[done..end]),
                })
                .collect();
            // Output j's lo and hi rows, elements done..end.
            let mut outs: Vec<&mut [f64]> = Vec::with_capacity(2 * m);
            for (lo_row, hi_row) in lo_all.chunks_mut(n).zip(hi_all.chunks_mut(n)) {
                outs.push(&mut lo_row[done..end]);
                outs.push(&mut hi_row[done..end]);
            }
            py.allow_threads(|| self.eval.eval_columns(&part, &mut outs))
                .map_err(|e| to_py(e, self.expr.source()))?;
            done = end;
            py.check_signals()?;
            if let Some(callback) = progress {
                callback.call1((done, n))?;
            }
        }
        drop((lo_w, hi_w));
        Ok((lo_obj, hi_obj))
    }
}

/// Page-locked host memory lent to NumPy (`ivjit.pinned_zeros`): the array's data lies in an
/// [`ivjit::HostBuffer`], which the GPU backend copies from and to directly.
#[pyclass(module = "ivjit", frozen)]
struct PinnedBuffer {
    buffer: ivjit::HostBuffer,
    /// The data's address, taken while the buffer was owned mutably (NumPy writes through it).
    address: usize,
}

#[pymethods]
impl PinnedBuffer {
    /// The NumPy array interface (version 3): a writeable 1-D float64 array over the buffer.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<pyo3::Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("shape", (self.buffer.len(),))?;
        d.set_item("typestr", "<f8")?;
        d.set_item("data", (self.address, false))?;
        d.set_item("version", 3)?;
        Ok(d)
    }

    /// Whether the memory is page-locked (false without a GPU: ordinary memory then).
    #[getter]
    fn locked(&self) -> bool {
        self.buffer.is_locked()
    }
}

/// `len` zeros in page-locked memory where a GPU driver can lock it, else in ordinary memory.
/// `MemoryError` when the memory cannot be had, `ValueError` when its size overflows.
#[pyfunction]
fn _pinned(py: Python<'_>, len: usize) -> PyResult<PinnedBuffer> {
    use ivjit::{HostAllocError, HostBuffer};
    let mut buffer = py
        .allow_threads(|| HostBuffer::new_or_plain(len))
        .map_err(|e| match e {
            HostAllocError::TooLarge { .. } => PyValueError::new_err(e.to_string()),
            HostAllocError::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        })?;
    let address = buffer.as_mut_ptr() as usize;
    Ok(PinnedBuffer { buffer, address })
}

/// Compiles an expression: `compile("x^2 - y", precision="f64", backend="auto",
/// form="natural")`; `form="mean-value"` evaluates the mean-value form intersected with the
/// natural extension (`Expression::mean_value_form`), `form="monotone"` that form intersected
/// with the monotonicity test (`Expression::monotone_form`).
#[pyfunction]
#[pyo3(signature = (source, precision = "f64", backend = "auto", form = "natural"))]
fn compile(
    py: Python<'_>,
    source: &str,
    precision: &str,
    backend: &str,
    form: &str,
) -> PyResult<Function> {
    let p = precision_of(precision)?;
    let b = backend_of(backend)?;
    let form = match form {
        "natural" => "natural",
        "mean-value" | "mean_value" => "mean-value",
        "monotone" => "monotone",
        _ => {
            return Err(PyValueError::new_err(format!(
                "form must be 'natural', 'mean-value' or 'monotone', not {form:?}"
            )))
        }
    };
    let source = source.to_string();
    py.allow_threads(move || {
        let mut expr = ivjit::Expression::parse(&source).map_err(|e| (e, source.clone()))?;
        expr = match form {
            "mean-value" => expr.mean_value_form(),
            "monotone" => expr.monotone_form(),
            _ => Ok(expr),
        }
        .map_err(|e| (e, source.clone()))?;
        let eval = ivjit::Evaluator::new(&expr, p, b).map_err(|e| (e, source.clone()))?;
        Ok(Function {
            decorated: std::sync::OnceLock::new(),
            expr,
            eval,
            asked_backend: backend.to_string(),
            form: form.to_string(),
        })
    })
    .map_err(|(e, s): (ivjit::Error, String)| to_py(e, &s))
}

/// An interval for `relate`: a `(lo, hi)` pair of floats (`(nan, nan)` is empty, as the
/// package writes empty results), a float (a point), or a text in ivjit's syntax (`"[1, 2]_dac"`,
/// `"[nai]"`) whose bounds are doubles as written.
fn decorated_arg(v: &pyo3::Bound<'_, PyAny>) -> PyResult<ivjit::DecoratedInterval> {
    use ivjit::{DecoratedInterval, Interval};
    if let Ok(text) = v.extract::<String>() {
        return DecoratedInterval::parse_exact(&text)
            .map_err(|e| InputError::new_err(e.to_string()));
    }
    let interval = if let Ok((lo, hi)) = v.extract::<(f64, f64)>() {
        if lo.is_nan() && hi.is_nan() {
            Interval::EMPTY
        } else {
            Interval::new(lo, hi).map_err(|e| InputError::new_err(e.to_string()))?
        }
    } else if let Ok(x) = v.extract::<f64>() {
        Interval::point(x).map_err(|e| InputError::new_err(e.to_string()))?
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "an interval is a (lo, hi) pair of floats, a float, or a text such as '[1, 2]_dac'",
        ));
    };
    Ok(DecoratedInterval::undecorated(interval))
}

/// IEEE 1788's comparisons: a dict of `isEmpty`, `isEntire`, `isNaI`, `isCommonInterval`,
/// `isSingleton` of `a`, `isMember` of `member` in `a`, and with `b` the `overlap` state (None
/// for NaI) and `equal`, `subset`, `interior`, `disjoint`, `less`, `strictLess`, `precedes`,
/// `strictPrecedes` of `a` and `b`. Exact, like `ivjit relate`.
#[pyfunction]
#[pyo3(signature = (a, b = None, member = None))]
fn relate<'py>(
    py: Python<'py>,
    a: &pyo3::Bound<'py, PyAny>,
    b: Option<&pyo3::Bound<'py, PyAny>>,
    member: Option<f64>,
) -> PyResult<pyo3::Bound<'py, PyDict>> {
    let a = decorated_arg(a)?;
    let d = PyDict::new(py);
    for (name, f) in ivjit::relation::PREDICATES {
        d.set_item(name, f(&a))?;
    }
    if let Some(x) = member {
        d.set_item("isMember", a.is_member(x))?;
    }
    if let Some(b) = b {
        let b = decorated_arg(b)?;
        d.set_item("overlap", a.overlap(&b).map(|o| o.name()))?;
        for (name, f) in ivjit::relation::RELATIONS {
            d.set_item(name, f(&a, &b))?;
        }
    }
    Ok(d)
}

/// A correctly rounded reduction (`ivjit::reduction`): `kind` is `sum`, `sum_abs`, `sum_sqr`
/// or `dot`; `rounding` `nearest`, `down` or `up`.
#[pyfunction]
#[pyo3(signature = (kind, x, y = None, rounding = "nearest"))]
fn _reduce(kind: &str, x: Vec<f64>, y: Option<Vec<f64>>, rounding: &str) -> PyResult<f64> {
    use ivjit::{reduction, Round};
    let r = match rounding {
        "nearest" => Round::Nearest,
        "down" => Round::Down,
        "up" => Round::Up,
        _ => {
            return Err(PyValueError::new_err(format!(
                "rounding must be 'nearest', 'down' or 'up', not {rounding:?}"
            )))
        }
    };
    Ok(match (kind, y) {
        ("sum", None) => reduction::sum(&x, r),
        ("sum_abs", None) => reduction::sum_abs(&x, r),
        ("sum_sqr", None) => reduction::sum_sqr(&x, r),
        ("dot", Some(y)) if y.len() == x.len() => reduction::dot(&x, &y, r),
        ("dot", Some(y)) => {
            return Err(InputError::new_err(format!(
                "dot needs vectors of one length, not {} and {}",
                x.len(),
                y.len()
            )))
        }
        _ => return Err(PyValueError::new_err(format!("no reduction {kind:?}"))),
    })
}

/// The variables of comma-separated constraints (`ivjit::search::pave::Constraints`), in the
/// order a paving's boxes list them.
#[pyfunction]
fn _constraint_vars(constraints: &str) -> PyResult<Vec<String>> {
    let c = ivjit::search::pave::Constraints::parse(constraints)
        .map_err(|e| InputError::new_err(e.to_string()))?;
    let expr = ivjit::Expression::parse(&c.source).map_err(|e| to_py(e, &c.source))?;
    Ok(expr.vars().to_vec())
}

/// Constraints read (`ivjit::search::pave::Constraints`) and a box checked, for `_pave` and
/// `_contract`; errors as `InputError`.
fn constraints_and_root(
    constraints: &str,
    root: &[(f64, f64)],
) -> PyResult<(ivjit::search::pave::Constraints, Vec<ivjit::Interval>)> {
    let c = ivjit::search::pave::Constraints::parse(constraints)
        .map_err(|e| InputError::new_err(e.to_string()))?;
    let root = root
        .iter()
        .map(|&(lo, hi)| {
            ivjit::Interval::new(lo, hi).map_err(|e| InputError::new_err(e.to_string()))
        })
        .collect::<PyResult<_>>()?;
    Ok((c, root))
}

/// The box narrowed by the constraints' HC4Revise contractor (`Expression::contractor`), one
/// (lo, hi) per variable, or None where no point of it satisfies them.
#[pyfunction]
fn _contract(
    py: Python<'_>,
    constraints: &str,
    root: Vec<(f64, f64)>,
    sweeps: usize,
    precision: &str,
    backend: &str,
) -> PyResult<Option<Vec<(f64, f64)>>> {
    let (c, root) = constraints_and_root(constraints, &root)?;
    let (precision, choice) = (precision_of(precision)?, backend_of(backend)?);
    let out = search(py, &c.source, || {
        let expr = ivjit::Expression::parse(&c.source)?;
        let contractor = expr.contractor(&c.ranges, sweeps.max(1))?;
        ivjit::Evaluator::new(&contractor, precision, choice)?.eval(&root)
    })?;
    Ok((!out.iter().any(ivjit::Interval::is_empty))
        .then(|| out.iter().map(|iv| (iv.lo, iv.hi)).collect()))
}

/// Boxes of `nv` sides as one (count, nv, 2) float64 array of (lo, hi).
fn boxes_array<'py, 'a>(
    py: Python<'py>,
    boxes: impl Iterator<Item = &'a [ivjit::Interval]>,
    nv: usize,
) -> PyResult<pyo3::Bound<'py, PyAny>> {
    let mut count = 0;
    let flat: Vec<f64> = boxes
        .inspect(|_| count += 1)
        .flat_map(|b| b.iter().flat_map(|iv| [iv.lo, iv.hi]))
        .collect();
    Ok(PyArray1::from_vec(py, flat)
        .reshape([count, nv, 2])?
        .into_any())
}

/// Paving (`ivjit::search::pave::pave`): the inner, boundary and outer boxes as (count, vars,
/// 2) arrays, the boxes evaluated, and whether the budget ran out.
#[pyfunction]
#[allow(clippy::type_complexity, clippy::too_many_arguments)] // the tuple and the keywords of `ivjit.pave`
fn _pave<'py>(
    py: Python<'py>,
    constraints: &str,
    root: Vec<(f64, f64)>,
    eps: f64,
    max_boxes: usize,
    precision: &str,
    backend: &str,
    ratio: f64,
) -> PyResult<(
    pyo3::Bound<'py, PyAny>,
    pyo3::Bound<'py, PyAny>,
    pyo3::Bound<'py, PyAny>,
    usize,
    bool,
)> {
    use ivjit::search::pave::Paver;
    let (c, root) = constraints_and_root(constraints, &root)?;
    if eps.is_nan() || eps <= 0.0 {
        return Err(InputError::new_err(format!(
            "eps must be positive, not {eps}"
        )));
    }
    if !(0.0..1.0).contains(&ratio) {
        return Err(InputError::new_err(format!(
            "ratio must be in [0, 1) (0 turns the fixpoint off), not {ratio}"
        )));
    }
    let (precision, choice) = (precision_of(precision)?, backend_of(backend)?);
    let p = search(py, &c.source, || {
        Paver::new(&c, precision, choice)?
            .with_ratio(ratio)
            .pave(&root, eps, max_boxes)
    })?;
    let nv = root.len();
    let array = |list: &[Vec<ivjit::Interval>]| boxes_array(py, list.iter().map(Vec::as_slice), nv);
    Ok((
        array(&p.inner)?,
        array(&p.boundary)?,
        array(&p.outer)?,
        p.evaluated,
        p.truncated,
    ))
}

/// Systems by branch and prune (`ivjit::search::system::solve_system`): the solution,
/// undecided and inner boxes as (count, vars, 2) arrays, whether the search completed, whether
/// Krawczyk's test applied, the boxes evaluated and the Newton steps.
#[pyfunction]
#[allow(clippy::type_complexity)] // the tuple `ivjit.solve_system` unpacks
fn _solve_system<'py>(
    py: Python<'py>,
    constraints: &str,
    root: Vec<(f64, f64)>,
    eps: f64,
    max_boxes: usize,
    backend: &str,
) -> PyResult<(
    pyo3::Bound<'py, PyAny>,
    pyo3::Bound<'py, PyAny>,
    pyo3::Bound<'py, PyAny>,
    bool,
    bool,
    usize,
    usize,
)> {
    use ivjit::search::system::{solve_system, SystemOptions};
    let (c, root) = constraints_and_root(constraints, &root)?;
    if eps.is_nan() || eps <= 0.0 {
        return Err(InputError::new_err(format!(
            "eps must be positive, not {eps}"
        )));
    }
    let choice = backend_of(backend)?;
    let options = SystemOptions { eps, max_boxes };
    let found = search(py, &c.source, || solve_system(&c, &root, options, choice))?;
    let nv = root.len();
    Ok((
        boxes_array(py, found.solutions.iter().map(|s| s.sides.as_slice()), nv)?,
        boxes_array(py, found.undecided.iter().map(Vec::as_slice), nv)?,
        boxes_array(py, found.inner.iter().map(Vec::as_slice), nv)?,
        found.complete(),
        found.square,
        found.evaluated,
        found.newton_steps,
    ))
}

/// The variables of a constrained problem (`ivjit::search::constrained::problem_expression`),
/// in the order its box is given.
#[pyfunction]
fn _problem_vars(objective: &str, constraints: &str) -> PyResult<Vec<String>> {
    let c = ivjit::search::pave::Constraints::parse(constraints)
        .map_err(|e| InputError::new_err(e.to_string()))?;
    let expr = ivjit::search::constrained::problem_expression(objective, &c)
        .map_err(|e| to_py(e, objective))?;
    Ok(expr.vars().to_vec())
}

/// Constrained minimization (`ivjit::search::constrained::minimize_subject_to`): (lower,
/// upper, argmin or None, stopped, relaxation, rounds, boxes, remaining).
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)] // what `ivjit.minimize` passes
fn _minimize_subject_to(
    py: Python<'_>,
    objective: &str,
    constraints: &str,
    root: Vec<(f64, f64)>,
    tol: f64,
    eq_tol: f64,
    max_boxes: usize,
    precision: &str,
    backend: &str,
) -> PyResult<(
    f64,
    f64,
    Option<Vec<f64>>,
    &'static str,
    f64,
    usize,
    usize,
    usize,
)> {
    use ivjit::search::constrained::{minimize_subject_to, ConstrainedOptions, Stopped};
    let (c, root) = constraints_and_root(constraints, &root)?;
    for (name, v) in [("tol", tol), ("eq_tol", eq_tol)] {
        if v.is_nan() || v < 0.0 {
            return Err(InputError::new_err(format!("{name} must be >= 0, not {v}")));
        }
    }
    let (precision, choice) = (precision_of(precision)?, backend_of(backend)?);
    let options = ConstrainedOptions {
        tol,
        eq_tol,
        max_boxes,
        ..ConstrainedOptions::default()
    };
    let m = search(py, objective, || {
        minimize_subject_to(objective, &c, &root, options, precision, choice)
    })?;
    let stopped = match m.stopped {
        Stopped::Converged => "converged",
        Stopped::Narrow => "narrow",
        Stopped::Budget => "budget",
        Stopped::Infeasible => "infeasible",
    };
    Ok((
        m.lower,
        m.upper,
        m.argmin,
        stopped,
        m.relaxation,
        m.rounds,
        m.evaluated,
        m.remaining,
    ))
}

#[pymodule]
fn _ivjit(m: &pyo3::Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(relate, m)?)?;
    m.add_function(wrap_pyfunction!(_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(_pave, m)?)?;
    m.add_function(wrap_pyfunction!(_solve_system, m)?)?;
    m.add_function(wrap_pyfunction!(_problem_vars, m)?)?;
    m.add_function(wrap_pyfunction!(_minimize_subject_to, m)?)?;
    m.add_function(wrap_pyfunction!(_contract, m)?)?;
    m.add_function(wrap_pyfunction!(_constraint_vars, m)?)?;
    m.add_class::<Function>()?;
    m.add_class::<PinnedBuffer>()?;
    m.add_function(wrap_pyfunction!(_pinned, m)?)?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("SyntaxError", py.get_type::<SyntaxError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("GpuError", py.get_type::<GpuError>())?;
    Ok(())
}
