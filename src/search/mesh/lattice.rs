//! Steps 2 and 4 of the mesh: the lattice of cell corners, face centers and cell centers (in
//! half-cell units: corners have three even coordinates, face centers two odd, cell centers
//! three odd; a point with exactly one odd coordinate is an edge's midpoint, not a vertex), the
//! signs of its vertices, and the triangles of the tetrahedra whose vertices differ in sign.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::octree::Cells;
use super::{pack, unpack, Field, MeshStats, Space};
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
    pub vertices: Vec<[f64; 3]>,
}

impl Lattice {
    /// The signs proven by proven cells at the vertices of the boundary cells, and the rest
    /// listed for [`Lattice::sample`].
    pub fn new(space: &Space, cells: &Cells) -> Lattice {
        let mut lattice = Lattice {
            last: 2 * space.n,
            signs: HashMap::default(),
            pending: Vec::new(),
            moved: HashMap::default(),
        };
        let mut listed = HashSet::default();
        for &c in &cells.boundary {
            for v in element_vertices(center(c)) {
                let k = pack(v);
                if lattice.on_face(v) || lattice.signs.contains_key(&k) || listed.contains(&k) {
                    continue;
                }
                match cells.proven_sign(v) {
                    Some(s) => {
                        lattice.signs.insert(k, s);
                    }
                    None => {
                        listed.insert(k);
                        lattice.pending.push(k);
                    }
                }
            }
        }
        lattice
    }

    /// f's sign at every listed vertex (a point whose enclosure holds 0 counts as outside).
    pub fn sample(
        &mut self,
        field: &Field,
        space: &Space,
        stats: &mut MeshStats,
    ) -> Result<(), Error> {
        let pending = std::mem::take(&mut self.pending);
        let points: Vec<[f64; 3]> = pending.iter().map(|&k| self.position(space, k)).collect();
        for (k, s) in pending.into_iter().zip(field.signs(&points)?) {
            if s.is_none() {
                stats.unproven_samples += 1;
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

    /// A witness of the other sign moves `v` to `at`.
    pub fn flip(&mut self, v: [u32; 3], sign: bool, at: [f64; 3]) {
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
    /// the mesh is closed.
    pub fn march(&self, space: &Space, cells: &Cells, stats: &mut MeshStats) -> Marched {
        let n = space.n;
        let mut work: Vec<[u32; 3]> = cells.boundary.clone();
        work.extend(cells.inside_on_faces());
        for &k in self.moved.keys() {
            work.extend(cells.holding(unpack(k)));
        }
        let mut out = Marched {
            triangles: Vec::new(),
            edges: Vec::new(),
            vertices: Vec::new(),
        };
        // About 7 vertices of the mesh per boundary cell (a sphere: 7.1).
        let mut index: HashMap<(u64, u64), u32> =
            HashMap::with_capacity_and_hasher(8 * work.len(), Default::default());
        let mut seen = HashSet::with_capacity_and_hasher(2 * work.len(), Default::default());
        while let Some(c) = work.pop() {
            if !seen.insert(pack(c)) {
                continue;
            }
            stats.marched_cells += 1;
            let m = center(c);
            let sm = self.sign(m, cells);
            for axis in 0..3 {
                let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
                for side in [-1, 1] {
                    let f = step(m, axis, side);
                    let q = [(-1, -1), (1, -1), (1, 1), (-1, 1)]
                        .map(|(u, w)| step(step(f, a1, u), a2, w));
                    let sf = self.sign(f, cells);
                    let sq = q.map(|v| self.sign(v, cells));
                    let mixed = sq.iter().any(|&s| s != sf);
                    for i in 0..4 {
                        if !mixed && sm == sf {
                            break;
                        }
                        let j = (i + 1) % 4;
                        let tet = [(m, sm), (f, sf), (q[i], sq[i]), (q[j], sq[j])];
                        march_tetrahedron(&tet, &mut index, &mut out);
                    }
                    let across = c[axis] as i64 + side as i64;
                    if mixed && (0..n as i64).contains(&across) {
                        let mut next = c;
                        next[axis] = across as u32;
                        if !seen.contains(&pack(next)) {
                            work.push(next);
                        }
                    }
                }
            }
        }
        out
    }
}

/// The triangles of one tetrahedron (vertices with their signs, `true` for f < 0): none when
/// the signs agree, one around a vertex whose sign is alone, two (a quadrilateral) when they
/// split two and two. Each is oriented with its normal from inside (f < 0) to outside, decided
/// on the lattice's own points (the midpoints of the tetrahedron's edges: an orientation
/// survives the axes' scaling), so that two triangles sharing an edge of the mesh give it
/// opposite directions.
fn march_tetrahedron(
    tet: &[([u32; 3], bool); 4],
    index: &mut HashMap<(u64, u64), u32>,
    out: &mut Marched,
) {
    let negatives = tet.iter().filter(|t| t.1).count();
    if negatives == 0 || negatives == 4 {
        return;
    }
    let p = |i: usize| tet[i].0.map(f64::from);
    let mid = |i: usize, j: usize| {
        let (a, b) = (p(i), p(j));
        [0, 1, 2].map(|d| 0.5 * (a[d] + b[d]))
    };
    // The vertex of the mesh on the edge from i to j, made once per lattice edge.
    let mut vertex = |i: usize, j: usize| -> u32 {
        let (inside, outside) = if tet[i].1 { (i, j) } else { (j, i) };
        let key = (pack(tet[inside].0), pack(tet[outside].0));
        *index.entry(key).or_insert_with(|| {
            out.edges.push(key);
            (out.edges.len() - 1) as u32
        })
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
        out.triangles.push([v[0], v[1], v[2]]);
        out.triangles.push([v[0], v[2], v[3]]);
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
    out.triangles.push(others.map(|j| vertex(lone, j)));
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
    lattice: &Lattice,
    edges: &[(u64, u64)],
    steps: u32,
) -> Result<Vec<[f64; 3]>, Error> {
    let mut ends: Vec<([f64; 3], [f64; 3])> = edges
        .iter()
        .map(|&(i, o)| (lattice.position(space, i), lattice.position(space, o)))
        .collect();
    let half = |(a, b): &([f64; 3], [f64; 3])| [0, 1, 2].map(|d| 0.5 * (a[d] + b[d]));
    for _ in 0..steps {
        crate::search::interrupt::check()?;
        let mids: Vec<[f64; 3]> = ends.iter().map(half).collect();
        let signs = field.signs(&mids)?;
        for ((e, m), s) in ends.iter_mut().zip(mids).zip(signs) {
            if s == Some(true) {
                e.0 = m;
            } else {
                e.1 = m;
            }
        }
    }
    Ok(ends.iter().map(half).collect())
}
