//! Meshing: a closed triangle mesh of the surface f = 0 over a box of space, built on an
//! interval search so that thin parts between the sample points are found, not lost.
//!
//! # The steps
//! 1. **Cells** ([`octree`]): the region is cut into `2^depth` cells a side by subdivision; a
//!    cell on which f's enclosure is > 0 (< 0) is proven outside (inside) and not cut further.
//!    The rest, the *boundary cells* at the finest level, are where the surface may pass.
//! 2. **Samples** ([`lattice`]): every cell is split into 24 tetrahedra around its center
//!    (one per edge of each face, the face's center and the cell's center their other two
//!    vertices). The tetrahedra of neighbouring cells share their faces, so the vertices'
//!    signs alone define a closed surface (marching tetrahedra has no ambiguous cases). A
//!    vertex's sign is proven from a proven cell that holds it, else f at the point (a point
//!    whose enclosure holds 0 counts as outside, and is counted).
//! 3. **Witnesses** ([`witness`]): a point sampler loses a part thinner than a cell when every
//!    sample misses it. Here every boundary cell, face and edge whose vertices agree in sign is
//!    searched, by interval subdivision `witness_levels` deep, either proving that f keeps that
//!    sign on it or finding a point of the other sign — a *witness*. The witness becomes the
//!    nearest end of the edge (the face's center, the cell's center), which takes its sign and
//!    its position. Elements neither proven nor witnessed are counted as uncertain.
//! 4. **Triangles**: each tetrahedron whose vertices differ in sign gives one triangle or two,
//!    oriented from inside (f < 0) to outside; a vertex of the mesh sits on a tetrahedron's edge
//!    whose ends differ, placed by `bisections` steps of bisection on f between the two points
//!    (so each vertex is within 2^-bisections of the edge's length of a sign change of f).
//!    The region's own boundary counts as outside, so the mesh is closed where the surface
//!    leaves the region (flat caps on the region's faces).
//! 5. **Normals** ([`normals`], with [`mesh_with_normals`]): f's gradient on each vertex's last
//!    bracket, certain where it proves a normal; boundary cells where a partial derivative
//!    keeps its sign are of certain topology.
//!
//! The mesh is watertight and 2-manifold by construction (every edge of the mesh is in exactly
//! two triangles, which give it opposite directions) whatever f is; the tests check it.

pub(crate) mod gpu;
mod lattice;
pub(crate) mod normals;
mod octree;
mod witness;
pub mod write;

use crate::error::SearchError;
use crate::round::{add_f64, mul_f64, Round};
use crate::search::tape::{Chains, Tape};
use crate::{Error, Evaluator};

/// What [`mesh`] builds, and how finely.
#[derive(Clone, Debug)]
pub struct MeshOptions {
    /// Cells per side: `2^depth` (1 to 11).
    pub depth: u32,
    /// `[x0, x1, y0, y1, z0, z1]`, finite, each lower end below its upper end.
    pub region: [f64; 6],
    /// How deep the witness search subdivides an edge, a face or a cell (0 turns it off: the
    /// mesh is then the point-sampled one of the same lattice).
    pub witness_levels: u32,
    /// Bisection steps placing each vertex of the mesh.
    pub bisections: u32,
}

impl Default for MeshOptions {
    fn default() -> Self {
        MeshOptions {
            depth: 6,
            region: [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0],
            witness_levels: 3,
            bisections: 10,
        }
    }
}

/// A triangle mesh: each triangle's vertices are listed counter-clockwise seen from outside
/// (f > 0), so its normal `(b - a) x (c - a)` points out of the solid f < 0.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    /// The vertices, each the middle of a bracket of f's sign change from the last bisection
    /// ([`MeshStats::unproven_samples`] and the region's faces aside: see docs/mesh.md).
    pub vertices: Vec<[f64; 3]>,
    /// Triangles by vertex index.
    pub triangles: Vec<[u32; 3]>,
    /// Unit normals at the vertices, pointing outside (f > 0): the direction of the middle of
    /// the gradient's enclosure on the vertex's last bracket. Empty unless asked for
    /// ([`mesh_with_normals`]).
    pub normals: Vec<[f64; 3]>,
    /// Whether each normal is certain: the vertex's bracket holds a zero of f (both ends'
    /// signs proven), f is proven continuous on the bracket's box and the gradient's
    /// enclosure there excludes the zero vector (so the surface has a normal at that zero and
    /// it lies in the enclosure's directions). Where not, the normal is a guess.
    pub normal_certain: Vec<bool>,
    /// What the search proved and found.
    pub stats: MeshStats,
}

/// What the search proved and found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeshStats {
    /// Cells of the finest level: `8^depth`.
    pub cells: u64,
    /// Finest-level cells proven outside (f > 0 on the whole cell).
    pub outside_cells: u64,
    /// Finest-level cells proven inside (f < 0 on the whole cell).
    pub inside_cells: u64,
    /// Finest-level cells where neither was proven.
    pub boundary_cells: u64,
    /// Witnesses found on edges (an end of each changed sign).
    pub edge_witnesses: u64,
    /// Witnesses found on faces (their centers changed sign).
    pub face_witnesses: u64,
    /// Witnesses found in cells (their centers changed sign).
    pub cell_witnesses: u64,
    /// Edges, faces and cells whose vertices agree in sign, not proven to keep that sign and
    /// with no witness found: where the surface may pass unseen at this depth.
    pub uncertain: u64,
    /// Sample points whose enclosure of f held 0 (counted as outside).
    pub unproven_samples: u64,
    /// Cells whose tetrahedra were marched.
    pub marched_cells: u64,
    /// Boxes and points evaluated.
    pub evaluations: u64,
    /// With normals: boundary cells where a partial derivative's enclosure excludes 0 and f
    /// is proven continuous, so f is strictly monotone along that axis and every line of the
    /// cell parallel to it meets the surface at most once (the surface there is one sheet: its
    /// topology in the cell is certain).
    pub certain_cells: u64,
    /// With normals: vertices whose normal is not certain.
    pub uncertain_normals: u64,
}

/// The mesh of f = 0 over `opts.region` (the expression may use x, y and z; one output). The
/// evaluations run on the evaluator's backend in batches, the rest on one thread (of rayon's
/// pool on the CPU backend, whose batches then split from inside it).
///
/// ```
/// use ivjit::search::mesh::{mesh, MeshOptions};
/// use ivjit::{BackendChoice, Evaluator, Expression, Precision};
/// let f = Expression::parse("x^2 + y^2 + z^2 - 0.5").unwrap();
/// let eval = Evaluator::new(&f, Precision::F64, BackendChoice::Cpu).unwrap();
/// let m = mesh(&eval, &MeshOptions { depth: 4, ..MeshOptions::default() }).unwrap();
/// // Every vertex is on the sphere to the bisections' precision.
/// for v in &m.vertices {
///     let r = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
///     assert!((r - 0.5f64.sqrt()).abs() < 1e-3);
/// }
/// assert!(m.triangles.len() > 1000);
/// ```
pub fn mesh(eval: &Evaluator, opts: &MeshOptions) -> Result<Mesh, Error> {
    match eval.backend() {
        crate::Backend::Cpu => super::on_pool(|| mesh_here(eval, None, opts)),
        crate::Backend::Gpu => mesh_here(eval, None, opts),
    }
}

/// [`mesh`] with normals at the vertices and the cells whose topology is certain: `gradient`
/// evaluates f's [`crate::Expression::gradient`] (the same variables).
///
/// ```
/// use ivjit::search::mesh::{mesh_with_normals, MeshOptions};
/// use ivjit::{BackendChoice, Evaluator, Expression, Precision};
/// let f = Expression::parse("x^2 + y^2 + z^2 - 0.5").unwrap();
/// let (g, _) = f.gradient().unwrap();
/// let (p, b) = (Precision::F64, BackendChoice::Cpu);
/// let (eval, grad) = (Evaluator::new(&f, p, b).unwrap(), Evaluator::new(&g, p, b).unwrap());
/// let m = mesh_with_normals(&eval, &grad, &MeshOptions { depth: 4, ..MeshOptions::default() }).unwrap();
/// // On a sphere the normal is the position's direction; every one is certain.
/// for (v, n) in m.vertices.iter().zip(&m.normals) {
///     let r = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
///     assert!((0..3).all(|d| (n[d] - v[d] / r).abs() < 1e-2));
/// }
/// assert!(m.normal_certain.iter().all(|&c| c));
/// ```
pub fn mesh_with_normals(
    eval: &Evaluator,
    gradient: &Evaluator,
    opts: &MeshOptions,
) -> Result<Mesh, Error> {
    match eval.backend() {
        crate::Backend::Cpu => super::on_pool(|| mesh_here(eval, Some(gradient), opts)),
        crate::Backend::Gpu => mesh_here(eval, Some(gradient), opts),
    }
}

fn mesh_here(
    eval: &Evaluator,
    gradient: Option<&Evaluator>,
    opts: &MeshOptions,
) -> Result<Mesh, Error> {
    mesh_by(eval, gradient, opts, true)
}

/// [`mesh_here`], with `tapes` false never by tapes (the tests compare the two).
fn mesh_by(
    eval: &Evaluator,
    gradient: Option<&Evaluator>,
    opts: &MeshOptions,
    tapes: bool,
) -> Result<Mesh, Error> {
    let mut field = Field::new(eval)?;
    if !tapes {
        field.tapes = None;
    }
    let space = Space::new(opts)?;
    let mut stats = MeshStats {
        cells: 1u64 << (3 * opts.depth),
        ..MeshStats::default()
    };
    let mut clock = Steps::new();
    let cells = octree::classify_cells(&field, &space, &mut stats)?;
    clock.step("cells");
    let mut lattice = lattice::Lattice::new(&space, &cells);
    clock.step("lattice");
    lattice.sample(&field, &space, &cells, &mut stats)?;
    clock.step("samples");
    witness::search(&field, &space, &cells, &mut lattice, opts, &mut stats)?;
    clock.step("witnesses");
    let out = lattice.march(&space, &cells, &mut stats);
    clock.step("marching");
    let placed = lattice::place(
        &field,
        &space,
        &cells,
        &lattice,
        &out.edges,
        opts.bisections,
    )?;
    clock.step("placement");
    let mut mesh = Mesh {
        vertices: placed.iter().map(|p| p.at).collect(),
        triangles: out.triangles,
        ..Mesh::default()
    };
    if let Some(g) = gradient {
        let g = normals::Gradient::new(g, &eval.program().var_names)?;
        normals::normals(&g, &placed, &mut mesh, &mut stats)?;
        stats.certain_cells = normals::certain_cells(&g, &space, &cells)?;
        stats.evaluations += g.evaluations();
    }
    stats.evaluations += field.evaluations.get();
    clock.step("normals");
    mesh.stats = stats;
    Ok(mesh)
}

/// Which tape evaluates a box or a point: an index into [`Field`]'s tapes, 0 for f's own.
pub(crate) type TapeId = u32;

/// The time of each step of a mesh on stderr where `IVJIT_MESH_PROFILE` is set.
pub(crate) struct Steps(Option<std::time::Instant>);

impl Steps {
    pub(crate) fn new() -> Steps {
        Steps(crate::gpu::env::mesh_profile().then(std::time::Instant::now))
    }

    pub(crate) fn step(&mut self, what: &str) {
        if let Some(t) = self.0 {
            eprintln!(
                "mesh step {what}: {:.1} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
            self.0 = Some(std::time::Instant::now());
        }
    }
}

/// f through the evaluator: boxes and points of space in, enclosures out. On the CPU backend
/// (where f has a tape), through *tapes* as well: the cells' subdivision prunes f's tape on
/// each cell it cuts ([`Field::classify`]), and a box or point inside a boundary cell runs the
/// tape of the cell's parent, valid on its box (the `min`/`max` decided there replaced by
/// their winner; the colonnade's boundary cells at depth 6 run 21 instructions on average
/// instead of 795); where nothing shorter than half of f's tape was found, f's program runs
/// in the evaluator (faster than the interpreter). On isotone operations (all but the point
/// functions) a decided `min` gives its winner's bits, so the enclosures are the whole
/// program's.
pub(crate) struct Field<'a> {
    eval: &'a Evaluator,
    /// f's tape (id 0) and the pruned ones, where evaluations run by tapes.
    tapes: Option<std::cell::RefCell<Vec<std::sync::Arc<Tape>>>>,
    /// Where x, y and z go among the expression's variables.
    slot: [Option<usize>; 3],
    n_vars: usize,
    evaluations: std::cell::Cell<u64>,
    soa: std::cell::RefCell<Vec<f64>>,
    out: std::cell::RefCell<Vec<f64>>,
}

impl<'a> Field<'a> {
    fn new(eval: &'a Evaluator) -> Result<Self, Error> {
        let program = eval.program();
        if program.outputs.len() != 1 {
            return Err(SearchError::Outputs(program.outputs.len()).into());
        }
        Self::of(eval)
    }

    /// f's variables bound to x, y and z, whatever its outputs.
    fn of(eval: &'a Evaluator) -> Result<Self, Error> {
        let program = eval.program();
        let mut slot = [None; 3];
        for (k, name) in program.var_names.iter().enumerate() {
            match name.as_str() {
                "x" => slot[0] = Some(k),
                "y" => slot[1] = Some(k),
                "z" => slot[2] = Some(k),
                _ => {
                    return Err(SearchError::Options(format!(
                        "the expression's variable '{name}' is not a coordinate of space: \
                         a mesh binds x, y and z only"
                    ))
                    .into())
                }
            }
        }
        // Tapes on the CPU backend where the evaluator knows f's graph and the tape runs it.
        let tapes = match (eval.backend(), eval.graph()) {
            (crate::Backend::Cpu, Some(g)) if g.outputs.len() == 1 => {
                Tape::binding(g, &["x", "y", "z"], Chains::AsWritten)
                    .ok()
                    .map(|t| std::cell::RefCell::new(vec![std::sync::Arc::new(t)]))
            }
            _ => None,
        };
        Ok(Field {
            eval,
            tapes,
            slot,
            n_vars: program.n_vars(),
            evaluations: std::cell::Cell::new(0),
            soa: Default::default(),
            out: Default::default(),
        })
    }

    /// Whether the evaluations run on the GPU.
    fn on_gpu(&self) -> bool {
        self.eval.backend() == crate::Backend::Gpu
    }

    /// Counts `n` evaluations made elsewhere (a kernel's).
    fn count(&self, n: u64) {
        self.evaluations.set(self.evaluations.get() + n);
    }

    /// f's enclosure on each box, by the tape named with it (a tape valid on a region that
    /// holds the box), or by the evaluator where the field has no tapes.
    fn boxes_on(&self, items: &[(TapeId, [[f64; 2]; 3])]) -> Result<Vec<[f64; 2]>, Error> {
        Ok(self.classify(items, false)?.0)
    }

    /// f's sign at each point, by the tape named with it: `Some(true)` proven < 0, `Some(false)`
    /// proven > 0, `None` when the enclosure holds 0 (or is empty).
    fn signs_on(&self, points: &[(TapeId, [f64; 3])]) -> Result<Vec<Option<bool>>, Error> {
        let boxes: Vec<(TapeId, [[f64; 2]; 3])> = points
            .iter()
            .map(|&(t, p)| (t, p.map(|c| [c, c])))
            .collect();
        Ok(self.boxes_on(&boxes)?.into_iter().map(sign_of).collect())
    }

    /// [`Field::boxes_on`], and with `prune`, for each box whose enclosure holds 0 the tape
    /// pruned by its `min`/`max` decisions there, valid on every box inside it (its id; the
    /// box's own tape where the field has no tapes or the box proved a sign).
    fn classify(
        &self,
        items: &[(TapeId, [[f64; 2]; 3])],
        prune: bool,
    ) -> Result<(Vec<[f64; 2]>, Vec<TapeId>), Error> {
        let Some(tapes) = &self.tapes else {
            let out = self.eval(items.len(), |i| items[i].1)?;
            return Ok((out, items.iter().map(|i| i.0).collect()));
        };
        let mut ids: Vec<TapeId> = items.iter().map(|i| i.0).collect();
        if !prune {
            // f's own tape is the evaluator's program, which runs it faster (compiled, not
            // interpreted); the pruned tapes by the interpreter.
            let (own, pruned): (Vec<usize>, Vec<usize>) =
                (0..items.len()).partition(|&i| items[i].0 == 0);
            if pruned.is_empty() {
                // Every item by f's program (a shape that prunes nothing: the sphere's
                // placement, ten batches of a million points, spent most of its time copying).
                return Ok((self.eval(items.len(), |i| items[i].1)?, ids));
            }
            let mut out = vec![[0.0; 2]; items.len()];
            for (&i, e) in own.iter().zip(self.eval(own.len(), |k| items[own[k]].1)?) {
                out[i] = e;
            }
            let rest: Vec<(TapeId, [[f64; 2]; 3])> = pruned.iter().map(|&i| items[i]).collect();
            self.evaluations
                .set(self.evaluations.get() + rest.len() as u64);
            let (done, _) = self.run_tapes(&tapes.borrow(), &rest, false);
            for (&i, e) in pruned.iter().zip(done) {
                out[i] = e;
            }
            return Ok((out, ids));
        }
        self.evaluations
            .set(self.evaluations.get() + items.len() as u64);
        let (out, pruned) = self.run_tapes(&tapes.borrow(), items, true);
        let mut tapes = tapes.borrow_mut();
        // A pruned tape is kept where it is at most half as long as f's: a longer one runs
        // slower in the interpreter than f's program in the evaluator.
        let worth = tapes[0].len() / 2;
        for (i, tape) in pruned {
            if tape.len() <= worth {
                ids[i] = tapes.len() as TapeId;
                tapes.push(std::sync::Arc::new(tape));
            }
        }
        Ok((out, ids))
    }

    /// Each item's enclosure by its tape in the evaluator's precision, and with `prune` the
    /// pruned tape of each item whose enclosure holds 0 (by index).
    #[allow(clippy::type_complexity)]
    fn run_tapes(
        &self,
        tapes: &[std::sync::Arc<Tape>],
        items: &[(TapeId, [[f64; 2]; 3])],
        prune: bool,
    ) -> (Vec<[f64; 2]>, Vec<(usize, Tape)>) {
        match self.eval.precision() {
            crate::Precision::F64 => run_tapes::<f64>(tapes, items, prune),
            crate::Precision::F32 => run_tapes::<f32>(tapes, items, prune),
        }
    }

    /// f's enclosure on the `n` boxes `bounds(i)`, through the evaluator's structure-of-arrays
    /// batch, written into buffers kept between calls (fresh ones cost page faults: the
    /// placement's ten batches of a million points spent more time there than evaluating).
    fn eval(
        &self,
        n: usize,
        bounds: impl Fn(usize) -> [[f64; 2]; 3],
    ) -> Result<Vec<[f64; 2]>, Error> {
        self.run(n, bounds, |out| {
            (0..n).map(|i| [out[i], out[n + i]]).collect()
        })
    }

    /// Every output's enclosure on the `n` boxes `bounds(i)`: output j's lo bounds at
    /// `2 j n..`, its hi bounds at `(2 j + 1) n..`.
    fn eval_all(
        &self,
        n: usize,
        bounds: impl Fn(usize) -> [[f64; 2]; 3],
    ) -> Result<Vec<f64>, Error> {
        self.run(n, bounds, <[f64]>::to_vec)
    }

    /// Evaluates the `n` boxes `bounds(i)` and lets `read` read every output's bounds.
    fn run<R: Default>(
        &self,
        n: usize,
        bounds: impl Fn(usize) -> [[f64; 2]; 3],
        read: impl FnOnce(&[f64]) -> R,
    ) -> Result<R, Error> {
        if n == 0 {
            return Ok(R::default());
        }
        let mut soa = self.soa.borrow_mut();
        let mut out = self.out.borrow_mut();
        soa.resize(2 * self.n_vars * n, 0.0);
        out.resize(2 * self.eval.program().outputs.len() * n, 0.0);
        for i in 0..n {
            let b = bounds(i);
            for (axis, slot) in self.slot.iter().enumerate() {
                if let Some(k) = *slot {
                    soa[2 * k * n + i] = b[axis][0];
                    soa[(2 * k + 1) * n + i] = b[axis][1];
                }
            }
        }
        self.eval.eval_soa_into(&soa, n, &mut out)?;
        self.evaluations.set(self.evaluations.get() + n as u64);
        Ok(read(&out))
    }
}

/// Boxes evaluated in one pass over a tape.
const LANES: usize = 64;

/// Each item's enclosure by its tape, runs of up to [`LANES`] items of one tape in parallel;
/// with `prune`, the pruned tape of each item whose enclosure holds 0 (by index).
#[allow(clippy::type_complexity)]
fn run_tapes<T: crate::search::tape::Bound>(
    tapes: &[std::sync::Arc<Tape>],
    items: &[(TapeId, [[f64; 2]; 3])],
    prune: bool,
) -> (Vec<[f64; 2]>, Vec<(usize, Tape)>) {
    use rayon::prelude::*;
    // The items by tape (a counting sort: the ids are dense, and a comparison sort of
    // millions of points took a sixth of a mesh), in order within a tape.
    let mut start = vec![0usize; tapes.len() + 1];
    for it in items {
        start[it.0 as usize + 1] += 1;
    }
    for t in 0..tapes.len() {
        start[t + 1] += start[t];
    }
    let mut order = vec![0usize; items.len()];
    for (i, it) in items.iter().enumerate() {
        let at = &mut start[it.0 as usize];
        order[*at] = i;
        *at += 1;
    }
    let runs: Vec<&[usize]> = order
        .chunk_by(|&a, &b| items[a].0 == items[b].0)
        .flat_map(|run| run.chunks(LANES))
        .collect();
    let scratch = || (Vec::new(), Vec::new(), Vec::new());
    let done: Vec<Vec<(usize, [f64; 2], Option<Tape>)>> = runs
        .par_iter()
        .map_init(scratch, |(slots, record, boxes), run| {
            let tape = &tapes[items[run[0]].0 as usize];
            boxes.clear();
            boxes.extend(
                run.iter()
                    .map(|&i| items[i].1.map(|[lo, hi]| (T::lo_of(lo), T::hi_of(hi)))),
            );
            record.clear();
            let values = tape.eval_lanes(boxes, slots, prune.then_some(&mut *record));
            let n = run.len();
            run.iter()
                .zip(values)
                .enumerate()
                .map(|(lane, (&i, (lo, hi)))| {
                    let e = [lo.to_f64(), hi.to_f64()];
                    // A pruning that decided nothing gives the same tape: the box's own
                    // (its id) serves, and its runs stay long.
                    let child = (prune && sign_of(e).is_none())
                        .then(|| tape.prune_lane(record, lane, n, true))
                        .filter(|t| t.len() < tape.len());
                    (i, e, child)
                })
                .collect()
        })
        .collect();
    let mut out = vec![[0.0; 2]; items.len()];
    let mut pruned = Vec::new();
    for (i, e, child) in done.into_iter().flatten() {
        out[i] = e;
        if let Some(t) = child {
            pruned.push((i, t));
        }
    }
    pruned.sort_unstable_by_key(|p| p.0);
    (out, pruned)
}

/// A vertex of the mesh after its bisections: the midpoint of the last bracket, and the
/// bracket's ends (inside end first).
pub(crate) struct Placed {
    pub at: [f64; 3],
    pub bracket: ([f64; 3], [f64; 3]),
    /// f < 0 at the first end and f >= 0 at the second are proven, so a zero of f lies on the
    /// segment between them where f is continuous there; not so where the outside end is on
    /// the region's faces (outside by definition) or a point whose enclosure reached both
    /// sides of 0.
    pub proven: bool,
}

/// The middle of a segment, without overflow near the largest doubles. (Any point serves
/// the bracket: its proven sign keeps a zero between the ends; the middle halves it.)
pub(crate) fn half((a, b): ([f64; 3], [f64; 3])) -> [f64; 3] {
    [0, 1, 2].map(|d| {
        let sum = a[d] + b[d];
        if sum.is_finite() {
            0.5 * sum
        } else {
            0.5 * a[d] + 0.5 * b[d]
        }
    })
}

/// The sign an enclosure proves: `Some(true)` for < 0, `Some(false)` for > 0.
fn sign_of([lo, hi]: [f64; 2]) -> Option<bool> {
    if hi < 0.0 {
        Some(true)
    } else if lo > 0.0 {
        Some(false)
    } else {
        None
    }
}

/// The region cut into `n = 2^depth` cells a side. Points are named by integer coordinates in
/// units of `1 / (n * 2^s)` of each side (the lattice uses s = 1: half cells, so corners are
/// even and centers odd; the witness search finer units).
pub(crate) struct Space {
    pub depth: u32,
    pub n: u32,
    axes: [Axis; 3],
}

impl Space {
    fn new(opts: &MeshOptions) -> Result<Space, Error> {
        if !(1..=11).contains(&opts.depth) {
            return Err(SearchError::Options(format!(
                "depth {}: expected 1 to 11 (2 to 2048 cells a side)",
                opts.depth
            ))
            .into());
        }
        let r = opts.region;
        for a in 0..3 {
            let (lo, hi) = (r[2 * a], r[2 * a + 1]);
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(SearchError::Options(format!(
                    "the region's {} range [{lo}, {hi}] must be finite with its lower end \
                     below its upper end",
                    ["x", "y", "z"][a]
                ))
                .into());
            }
        }
        // The finest unit must be wider than the rounding errors of the points and bounds
        // computed on the axis (at most 4 ulps of its largest coordinate, see `Axis`): then a
        // point computed to nearest lies in the rounded box of every cell and piece that holds
        // its real point, which the proven cells' signs and the witnesses rely on.
        let units = ((2u64 << opts.depth) << opts.witness_levels.min(20)) as f64;
        for a in 0..3 {
            let (lo, hi) = (r[2 * a], r[2 * a + 1]);
            let m = lo.abs().max(hi.abs());
            let ulp = if m < f64::MAX {
                m.next_up() - m
            } else {
                m - m.next_down()
            };
            if (0.5 * hi - 0.5 * lo) * 2.0 / units < 16.0 * ulp {
                return Err(SearchError::Options(format!(
                    "the region's {} range [{lo}, {hi}] is too narrow for its magnitude at depth                      {} with {} witness levels: its finest steps would be within rounding error                      of each other; use a smaller depth or fewer witness levels, or move the                      region nearer 0",
                    ["x", "y", "z"][a],
                    opts.depth,
                    opts.witness_levels
                ))
                .into());
            }
        }
        if opts.witness_levels > 20 || opts.bisections > 60 {
            return Err(SearchError::Options(
                "witness levels above 20 or bisections above 60 ask for more than f64 holds".into(),
            )
            .into());
        }
        Ok(Space {
            depth: opts.depth,
            n: 1 << opts.depth,
            axes: [0, 1, 2].map(|a| Axis::new(r[2 * a], r[2 * a + 1])),
        })
    }

    /// The box from `lo` to `hi` (units `1 / units` of each side), rounded outward: it holds
    /// every real point between them.
    fn box_of(&self, lo: [u64; 3], hi: [u64; 3], units: u64) -> [[f64; 2]; 3] {
        [0, 1, 2].map(|a| [self.axes[a].lo(lo[a], units), self.axes[a].hi(hi[a], units)])
    }

    /// The point `t` (units `1 / units`), rounded to nearest: it lies in every box
    /// [`Space::box_of`] gives around it (each step of the rounded-down and rounded-up chains
    /// is monotone, so round to nearest falls between them).
    fn point(&self, t: [u64; 3], units: u64) -> [f64; 3] {
        [0, 1, 2].map(|a| self.axes[a].at(t[a], units))
    }
}

/// One axis `[x0, x1]`: the point `s` of the way along it, `x0 (1 - s) + x1 s` with `s = t /
/// units` (exact: `units` is a power of two), bounded below, above, or to nearest. This form
/// never overflows (a region from -f64::MAX to f64::MAX has a width that does) and gives the
/// ends exactly. Each result is within 4 ulps of the axis's largest coordinate of the real
/// value (two products and a sum, each rounded once; the sum is at most that coordinate), and
/// [`Space::new`] makes the finest step wider than 16 of them.
struct Axis {
    x0: f64,
    x1: f64,
}

impl Axis {
    fn new(x0: f64, x1: f64) -> Axis {
        Axis { x0, x1 }
    }
    fn weights(t: u64, units: u64) -> (f64, f64) {
        let s = t as f64 / units as f64;
        (1.0 - s, s)
    }
    /// Each product and the sum rounded down: below the real value.
    fn lo(&self, t: u64, units: u64) -> f64 {
        let (a, b) = Self::weights(t, units);
        let d = Round::Down;
        add_f64(mul_f64(self.x0, a, d), mul_f64(self.x1, b, d), d)
    }
    fn hi(&self, t: u64, units: u64) -> f64 {
        let (a, b) = Self::weights(t, units);
        let u = Round::Up;
        add_f64(mul_f64(self.x0, a, u), mul_f64(self.x1, b, u), u)
    }
    /// Round to nearest: between [`Axis::lo`] and [`Axis::hi`] (each step is monotone).
    fn at(&self, t: u64, units: u64) -> f64 {
        let (a, b) = Self::weights(t, units);
        self.x0 * a + self.x1 * b
    }
}

/// Three coordinates of at most 21 bits in one key.
pub(crate) fn pack([a, b, c]: [u32; 3]) -> u64 {
    ((a as u64) << 42) | ((b as u64) << 21) | c as u64
}

pub(crate) fn unpack(k: u64) -> [u32; 3] {
    let m = (1u64 << 21) - 1;
    [(k >> 42) as u32, ((k >> 21) & m) as u32, (k & m) as u32]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    /// The tapes pruned on the cells give the whole program's bits where every operation is
    /// isotone (sums, products, squares, roots, min and max: a decided `min` is its winner's
    /// enclosure exactly), so the mesh by tapes is the mesh by the evaluator, bit for bit;
    /// and where the tapes prune, they run fewer instructions than f's.
    #[test]
    fn tapes_pruned_on_the_cells_give_the_evaluators_mesh() {
        let shapes = [
            ("x*x + y*y + z*z - 0.5", [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]),
            (
                "min(sqrt(x*x + y*y + z*z) - 0.6, max(abs(x - 0.5) - 0.2, abs(y) + abs(z) - 0.3))",
                [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0],
            ),
            // A wall thinner than the lattice (witnesses), off-center.
            ("abs(x - 0.013) - 0.004", [-0.7, 0.9, -1.0, 1.0, -0.5, 0.5]),
            (
                "max(min(x - 0.2, y + 0.1), z*z - 0.3)",
                [-1e300, 1e300, -1.0, 1.0, -1.0, 1.0],
            ),
        ];
        for (src, region) in shapes {
            let expr = Expression::parse(src).unwrap();
            for p in [Precision::F64, Precision::F32] {
                let eval = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
                let opts = MeshOptions {
                    depth: 5,
                    region,
                    ..MeshOptions::default()
                };
                let by_tapes = crate::search::on_pool(|| mesh_by(&eval, None, &opts, true));
                let by_eval = crate::search::on_pool(|| mesh_by(&eval, None, &opts, false));
                let (a, b) = (by_tapes.unwrap(), by_eval.unwrap());
                assert!(a.triangles.len() > 100, "{src}");
                assert_eq!(a.stats, b.stats, "{src} {p}");
                assert_eq!(a.triangles, b.triangles, "{src} {p}");
                let bits = |m: &Mesh| -> Vec<[u64; 3]> {
                    m.vertices.iter().map(|v| v.map(f64::to_bits)).collect()
                };
                assert!(bits(&a) == bits(&b), "{src} {p}: vertices differ");
            }
        }
        // The cells' tapes: most of the union's boundary cells run pruned tapes, shorter than
        // f's (not where both sides pass: near the rod's ends).
        let expr = Expression::parse(shapes[1].0).unwrap();
        let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
        let field = Field::new(&eval).unwrap();
        let opts = MeshOptions {
            depth: 5,
            ..MeshOptions::default()
        };
        let space = Space::new(&opts).unwrap();
        let cells = octree::classify_cells(&field, &space, &mut MeshStats::default()).unwrap();
        let tapes = field.tapes.as_ref().expect("the CPU runs tapes").borrow();
        let lens: Vec<usize> = cells
            .boundary
            .iter()
            .map(|&c| tapes[cells.tape_for(lattice::center(c)) as usize].len())
            .collect();
        let (full, shorter) = (tapes[0].len(), lens.iter().filter(|&&n| n < tapes[0].len()));
        assert!(shorter.count() * 2 > lens.len() && lens.iter().all(|&n| n <= full));
    }
}
