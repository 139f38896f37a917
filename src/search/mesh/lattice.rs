//! Steps 2 and 4 of the mesh: the lattice of cell corners, face centers and cell centers (in
//! half-cell units: corners have three even coordinates, face centers two odd, cell centers
//! three odd; a point with exactly one odd coordinate is an edge's midpoint, not a vertex), the
//! signs of its vertices, and the triangles of the tetrahedra whose vertices differ in sign.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::octree::Cells;
use super::{half, pack, sign_of, unpack, Field, MeshStats, Placed, Space, TapeId};
use crate::Error;

pub(crate) struct Lattice {
    /// 2n: the last coordinate of a vertex.
    last: u32,
    /// Signs decided so far (`true`: f < 0), by vertex key.
    signs: HashMap<u64, bool>,
    /// Vertices still to sample.
    pending: Vec<u64>,
    /// Vertices a witness moved: their new position.
    pub moved: HashMap<u64, [f64; 3]>,
    /// Samples whose enclosure reaches below 0 and above (counted as outside, not even
    /// proven f >= 0).
    unproven: HashSet<u64>,
}

/// The lattice points of an element (an edge, a face or a cell) whose center is `m`: `m`
/// moved by -1, 0 or +1 along each odd coordinate, less the edges' midpoints.
pub(crate) fn element_vertices(m: [u32; 3]) -> Vec<[u32; 3]> {
    let steps = |t: u32| -> &'static [i32] {
        if t % 2 == 1 {
            &[-1, 0, 1]
        } else {
            &[0]
        }
    };
    let mut out = Vec::with_capacity(15);
    for &a in steps(m[0]) {
        for &b in steps(m[1]) {
            for &c in steps(m[2]) {
                let v = [m[0] as i32 + a, m[1] as i32 + b, m[2] as i32 + c].map(|t| t as u32);
                if v.iter().filter(|t| *t % 2 == 1).count() != 1 {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// The center of the finest cell `c`.
pub(crate) fn center(c: [u32; 3]) -> [u32; 3] {
    c.map(|i| 2 * i + 1)
}

/// `v` moved by `delta` along `axis`.
fn step(mut v: [u32; 3], axis: usize, delta: i32) -> [u32; 3] {
    v[axis] = (v[axis] as i32 + delta) as u32;
    v
}

/// What [`Lattice::march`] gives: the triangles, and for each vertex of the mesh the lattice
/// edge it lies on (its end with f < 0 first).
pub(crate) struct Marched {
    pub triangles: Vec<[u32; 3]>,
    pub edges: Vec<(u64, u64)>,
}

impl Lattice {
    /// The signs proven by proven cells at the vertices of the boundary cells, and the rest
    /// listed for [`Lattice::sample`].
    pub fn new(space: &Space, cells: &Cells) -> Lattice {
        use rayon::prelude::*;
        let last = 2 * space.n;
        let on_face = |v: &[u32; 3]| v.iter().any(|&t| t == 0 || t == last);
        let mut keys: Vec<u64> = cells
            .boundary
            .par_iter()
            .flat_map_iter(|&c| {
                element_vertices(center(c))
                    .into_iter()
                    .filter(|v| !on_face(v))
                    .map(pack)
            })
            .collect();
        keys.par_sort_unstable();
        keys.dedup();
        let proven: Vec<Option<bool>> = keys
            .par_iter()
            .map(|&k| cells.proven_sign(unpack(k)))
            .collect();
        let mut signs = HashMap::with_capacity_and_hasher(keys.len(), Default::default());
        let mut pending = Vec::new();
        for (k, s) in keys.into_iter().zip(proven) {
            match s {
                Some(s) => {
                    signs.insert(k, s);
                }
                None => pending.push(k),
            }
        }
        Lattice {
            last,
            signs,
            pending,
            moved: HashMap::default(),
            unproven: HashSet::default(),
        }
    }

    /// f's sign at every listed vertex (a point whose enclosure holds 0 counts as outside).
    pub fn sample(
        &mut self,
        field: &Field,
        space: &Space,
        cells: &Cells,
        stats: &mut MeshStats,
    ) -> Result<(), Error> {
        use rayon::prelude::*;
        let pending = std::mem::take(&mut self.pending);
        let boxes: Vec<(TapeId, [[f64; 2]; 3])> = pending
            .par_iter()
            .map(|&k| {
                let at = self.position(space, k);
                (cells.tape_for(unpack(k)), at.map(|t| [t, t]))
            })
            .collect();
        for (k, e) in pending.into_iter().zip(field.boxes_on(&boxes)?) {
            let s = sign_of(e);
            if s.is_none() {
                stats.unproven_samples += 1;
                // f >= 0 proven (f = 0 exactly, say) still bounds a bracket from outside; a
                // NaN bound (empty: f undefined there) does not.
                if e[0] < 0.0 || e[0].is_nan() {
                    self.unproven.insert(k);
                }
            }
            self.signs.insert(k, s.unwrap_or(false));
        }
        Ok(())
    }

    /// On one of the region's faces: outside by definition, so that the mesh closes there.
    pub fn on_face(&self, v: [u32; 3]) -> bool {
        v.iter().any(|&t| t == 0 || t == self.last)
    }

    /// The sign of vertex `v` (`true`: f < 0): outside on the region's faces, else what a
    /// witness, a proven cell or f at the point said.
    pub fn sign(&self, v: [u32; 3], cells: &Cells) -> bool {
        if self.on_face(v) {
            return false;
        }
        if let Some(&s) = self.signs.get(&pack(v)) {
            return s;
        }
        let s = cells.proven_sign(v);
        debug_assert!(s.is_some(), "vertex {v:?} has no sign");
        s.unwrap_or(false)
    }

    /// Whether f >= 0 is proven at the outside vertex `k` (not on the region's faces, not an
    /// unproven sample).
    pub fn proven_outside(&self, k: u64) -> bool {
        !self.on_face(unpack(k)) && !self.unproven.contains(&k)
    }

    /// A witness of the other sign moves `v` to `at`.
    pub fn flip(&mut self, v: [u32; 3], sign: bool, at: [f64; 3]) {
        self.unproven.remove(&pack(v));
        self.signs.insert(pack(v), sign);
        self.moved.insert(pack(v), at);
    }

    /// Where vertex `k` is: its witness, or its lattice point.
    pub fn position(&self, space: &Space, k: u64) -> [f64; 3] {
        match self.moved.get(&k) {
            Some(&p) => p,
            None => space.point(unpack(k).map(u64::from), self.last as u64),
        }
    }

    /// The triangles of every tetrahedron whose vertices differ in sign. The cells marched are
    /// the boundary cells, the cells holding a moved vertex and the inside cells on the
    /// region's faces, and then every cell across a face whose vertices differ in sign from a
    /// marched cell: so each triangle's edges are shared with the next cell's triangles and
    /// the mesh is closed. The cells of a round are marched in parallel; the vertices of the
    /// mesh are the lattice edges the triangles name, sorted (so the mesh is the same whatever
    /// the threads' order).
    pub fn march(&self, space: &Space, cells: &Cells, stats: &mut MeshStats) -> Marched {
        use rayon::prelude::*;
        let mut clock = super::Steps::new();
        let n = space.n as i64;
        let mut round: Vec<u64> = cells.boundary.iter().map(|&c| pack(c)).collect();
        round.extend(cells.inside_on_faces().into_iter().map(pack));
        for &k in self.moved.keys() {
            round.extend(cells.holding(unpack(k)).map(pack));
        }
        round.par_sort_unstable();
        round.dedup();
        let mut seen: HashSet<u64> = round.iter().copied().collect();
        // Triangles as the lattice edges their vertices lie on, round after round.
        let mut triangles: Vec<[u64; 3]> = Vec::new();
        while !round.is_empty() {
            stats.marched_cells += round.len() as u64;
            // Each worker's cells into one pair of lists (not two per cell); `collect` keeps
            // the folds in the round's order, so the triangles come in the cells' order.
            let marched: Vec<(Vec<[u64; 3]>, Vec<u64>)> = round
                .par_iter()
                .fold(
                    || (Vec::new(), Vec::new()),
                    |(mut triangles, mut across), &k| {
                        self.march_cell(unpack(k), n, cells, &mut triangles, &mut across);
                        (triangles, across)
                    },
                )
                .collect();
            triangles.par_extend(marched.par_iter().flat_map_iter(|(t, _)| t.iter().copied()));
            let mut next = Vec::new();
            for (_, across) in marched {
                next.extend(across.into_iter().filter(|k| seen.insert(*k)));
            }
            next.sort_unstable();
            round = next;
        }
        clock.step("marching: rounds");
        // The vertices: every edge the triangles name, once, in the edges' order: the edges
        // sorted and made unique, each triangle's vertex found there by binary search, all
        // in parallel (a hash map of a million edges was the marching's bottleneck, then a
        // serial pass over sorted (edge, place) pairs).
        let mut edges: Vec<u64> = triangles.par_iter().flat_map_iter(|t| *t).collect();
        edges.par_sort_unstable();
        edges.dedup();
        let index = |k: u64| edges.binary_search(&k).expect("an edge of the mesh") as u32;
        let triangles = triangles.par_iter().map(|t| t.map(index)).collect();
        clock.step("marching: vertices numbered");
        Marched {
            triangles,
            edges: edges.into_par_iter().map(edge_ends).collect(),
        }
    }

    /// One cell's triangles (each vertex named by its lattice edge, inside end first) onto
    /// `triangles`, and the cells across its faces whose vertices differ in sign onto `across`.
    fn march_cell(
        &self,
        c: [u32; 3],
        n: i64,
        cells: &Cells,
        triangles: &mut Vec<[u64; 3]>,
        across: &mut Vec<u64>,
    ) {
        let m = center(c);
        let sm = self.sign(m, cells);
        // The eight corners' signs, each looked up once (each is a vertex of three faces):
        // corner `o` lies at +1 along axis d where bit d of `o` is set, else at -1.
        let corner = |v: [u32; 3]| (0..3).map(|d| usize::from(v[d] > m[d]) << d).sum::<usize>();
        let corners: [bool; 8] = std::array::from_fn(|o| {
            let v = [0, 1, 2].map(|d| if o >> d & 1 == 1 { m[d] + 1 } else { m[d] - 1 });
            self.sign(v, cells)
        });
        for axis in 0..3 {
            let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
            for side in [-1, 1] {
                let f = step(m, axis, side);
                let q =
                    [(-1, -1), (1, -1), (1, 1), (-1, 1)].map(|(u, w)| step(step(f, a1, u), a2, w));
                let sf = self.sign(f, cells);
                let sq = q.map(|v| corners[corner(v)]);
                let mixed = sq.iter().any(|&s| s != sf);
                if mixed || sm != sf {
                    for i in 0..4 {
                        let j = (i + 1) % 4;
                        let tet = [(m, sm), (f, sf), (q[i], sq[i]), (q[j], sq[j])];
                        march_tetrahedron(&tet, triangles);
                    }
                }
                let next = c[axis] as i64 + side as i64;
                if mixed && (0..n).contains(&next) {
                    let mut d = c;
                    d[axis] = next as u32;
                    across.push(pack(d));
                }
            }
        }
    }
}

/// The triangles of one tetrahedron (vertices with their signs, `true` for f < 0): none when
/// the signs agree, one around a vertex whose sign is alone, two (a quadrilateral) when they
/// split two and two. Each is oriented with its normal from inside (f < 0) to outside, decided
/// on the lattice's own points (the midpoints of the tetrahedron's edges: an orientation
/// survives the axes' scaling), so that two triangles sharing an edge of the mesh give it
/// opposite directions.
fn march_tetrahedron(tet: &[([u32; 3], bool); 4], out: &mut Vec<[u64; 3]>) {
    let negatives = tet.iter().filter(|t| t.1).count();
    if negatives == 0 || negatives == 4 {
        return;
    }
    let p = |i: usize| tet[i].0.map(f64::from);
    let mid = |i: usize, j: usize| {
        let (a, b) = (p(i), p(j));
        [0, 1, 2].map(|d| 0.5 * (a[d] + b[d]))
    };
    // The vertex of the mesh on the edge from i to j: the edge, from its inside end.
    let vertex = |i: usize, j: usize| -> u64 {
        let (inside, outside) = if tet[i].1 { (i, j) } else { (j, i) };
        edge_key(tet[inside].0, tet[outside].0)
    };
    if negatives == 2 {
        // The two inside vertices a, b and the two outside ones c, d.
        let (mut neg, mut pos) = ([0; 2], [0; 2]);
        let (mut i_neg, mut i_pos) = (0, 0);
        for (i, t) in tet.iter().enumerate() {
            if t.1 {
                neg[i_neg] = i;
                i_neg += 1;
            } else {
                pos[i_pos] = i;
                i_pos += 1;
            }
        }
        let ([a, b], [c, d]) = (neg, pos);
        let mut quad = [(a, c), (a, d), (b, d), (b, c)];
        let r = quad.map(|(i, j)| mid(i, j));
        let normal = cross(sub(r[2], r[0]), sub(r[3], r[1]));
        let outward = sub(mid(c, d), mid(a, b));
        if dot(normal, outward) < 0.0 {
            quad.reverse();
        }
        let v = quad.map(|(i, j)| vertex(i, j));
        out.push([v[0], v[1], v[2]]);
        out.push([v[0], v[2], v[3]]);
        return;
    }
    // The vertex alone in its sign, and the other three.
    let lone = (0..4)
        .find(|&i| tet.iter().filter(|t| t.1 == tet[i].1).count() == 1)
        .expect("one vertex is alone in its sign");
    let mut others = [(lone + 1) % 4, (lone + 2) % 4, (lone + 3) % 4];
    let r = others.map(|j| mid(lone, j));
    let normal = cross(sub(r[1], r[0]), sub(r[2], r[0]));
    // Away from a lone inside vertex, towards a lone outside one.
    let away = sub(r[0], p(lone));
    let outward = if tet[lone].1 { away } else { away.map(|t| -t) };
    if dot(normal, outward) < 0.0 {
        others.swap(1, 2);
    }
    out.push(others.map(|j| vertex(lone, j)));
}

/// A lattice edge in one word: its inside end's coordinates (13 bits each: at most 2^12) and
/// the step to its outside end (each coordinate -2 to 2 in half cells: a tetrahedron's edges
/// join a center to a face center or a corner, a face center to a corner, or two corners).
fn edge_key(inside: [u32; 3], outside: [u32; 3]) -> u64 {
    let step = |d: usize| (outside[d] as i64 - inside[d] as i64 + 2) as u64;
    (inside[0] as u64) << 33
        | (inside[1] as u64) << 20
        | (inside[2] as u64) << 7
        | (step(0) * 25 + step(1) * 5 + step(2))
}

/// An [`edge_key`]'s ends as [`pack`]ed vertices, inside first.
fn edge_ends(k: u64) -> (u64, u64) {
    let m = (1u64 << 13) - 1;
    let inside = [
        (k >> 33) as u32,
        ((k >> 20) & m) as u32,
        ((k >> 7) & m) as u32,
    ];
    let s = (k & 127) as i64;
    let step = [s / 25 - 2, s / 5 % 5 - 2, s % 5 - 2];
    let outside = [0, 1, 2].map(|d| (inside[d] as i64 + step[d]) as u32);
    (pack(inside), pack(outside))
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Step 4's placement: each vertex of the mesh by `steps` bisections of f on the segment
/// between its edge's two ends (the end with f < 0 first), all vertices a batch per step.
pub(crate) fn place(
    field: &Field,
    space: &Space,
    cells: &Cells,
    lattice: &Lattice,
    edges: &[(u64, u64)],
    steps: u32,
) -> Result<Vec<Placed>, Error> {
    use rayon::prelude::*;
    // Each edge's tape: a boundary cell's holding both ends, where both are lattice points
    // (a witness moved off its lattice point may leave the cells of the edge: f's own tape).
    let tapes: Vec<TapeId> = edges
        .par_iter()
        .map(|&(i, o)| {
            if lattice.moved.contains_key(&i) || lattice.moved.contains_key(&o) {
                0
            } else {
                cells.tape_between(unpack(i), unpack(o))
            }
        })
        .collect();
    let mut placed: Vec<Placed> = edges
        .par_iter()
        .map(|&(i, o)| {
            let bracket = (lattice.position(space, i), lattice.position(space, o));
            Placed {
                at: half(bracket),
                bracket,
                proven: lattice.proven_outside(o),
            }
        })
        .collect();
    // On the GPU, every step in one launch (f linked into the kernel).
    if field.on_gpu() {
        field.count(placed.len() as u64 * steps as u64);
        super::gpu::place(field.eval, field.slot, &mut placed, steps)?;
        return Ok(placed);
    }
    // The midpoints' batch, refilled in place each step rather than collected anew (a
    // million of them at depth 8; fresh lists cost page faults).
    let mut mids: Vec<(TapeId, [[f64; 2]; 3])> = vec![(0, [[0.0; 2]; 3]); placed.len()];
    for _ in 0..steps {
        crate::search::interrupt::check()?;
        mids.par_iter_mut()
            .zip(&placed)
            .zip(&tapes)
            .for_each(|((m, p), &t)| *m = (t, p.at.map(|c| [c, c])));
        let enclosures = field.boxes_on(&mids)?;
        let steps = placed.par_iter_mut().zip(&mids).zip(enclosures);
        steps.for_each(|((p, (_, m)), e)| {
            let m = m.map(|c| c[0]);
            if sign_of(e) == Some(true) {
                p.bracket.0 = m;
            } else {
                p.bracket.1 = m;
                p.proven = e[0] >= 0.0;
            }
            p.at = half(p.bracket);
        });
    }
    Ok(placed)
}
