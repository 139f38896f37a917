//! An independent check of a triangle mesh's topology and geometry, written for the tests
//! (it shares nothing with `ivjit::search::mesh`): closed and 2-manifold, consistently
//! oriented, its Euler characteristic, enclosed volume and area, and rays through it.

use std::collections::HashMap;

use ivjit::search::mesh::Mesh;

/// What [`topology`] found.
#[derive(Debug)]
pub struct Topology {
    pub vertices: usize,
    pub edges: usize,
    pub triangles: usize,
    /// V - E + F (2 per sphere, 0 per torus).
    pub euler: i64,
    /// Connected components of triangles sharing edges.
    pub components: usize,
}

/// Checks that every undirected edge is in exactly two triangles which give it opposite
/// directions (closed, 2-manifold along edges, consistently oriented), that no triangle repeats
/// a vertex, that every vertex is used, and that each vertex's triangles form one fan (manifold
/// at vertices). Panics with the first fault; returns the counts.
pub fn topology(mesh: &Mesh) -> Topology {
    let nv = mesh.vertices.len();
    let mut directed: HashMap<(u32, u32), usize> = HashMap::new();
    let mut used = vec![false; nv];
    for (t, tri) in mesh.triangles.iter().enumerate() {
        let [a, b, c] = *tri;
        assert!(
            a != b && b != c && a != c,
            "triangle {t} repeats a vertex: {tri:?}"
        );
        for (u, v) in [(a, b), (b, c), (c, a)] {
            assert!(
                (u as usize) < nv && (v as usize) < nv,
                "triangle {t}: index out of range"
            );
            used[u as usize] = true;
            let prev = directed.insert((u, v), t);
            assert!(prev.is_none(), "directed edge {u}->{v} in triangles {prev:?} and {t}: not oriented consistently or not 2-manifold");
        }
    }
    for (&(u, v), &t) in &directed {
        assert!(
            directed.contains_key(&(v, u)),
            "edge {u}-{v} of triangle {t} has no opposite: the mesh has a hole"
        );
    }
    assert!(used.iter().all(|&u| u), "a vertex in no triangle");
    // Around each vertex, the triangles' opposite edges must chain into one cycle.
    let mut around: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nv];
    for &[a, b, c] in &mesh.triangles {
        around[a as usize].push((b, c));
        around[b as usize].push((c, a));
        around[c as usize].push((a, b));
    }
    for (v, fan) in around.iter().enumerate() {
        let next: HashMap<u32, u32> = fan.iter().copied().collect();
        let (start, _) = fan[0];
        let mut at = start;
        let mut steps = 0;
        loop {
            at = next[&at];
            steps += 1;
            if at == start {
                break;
            }
            assert!(
                steps <= fan.len(),
                "vertex {v}: its triangles do not close into a fan"
            );
        }
        assert_eq!(
            steps,
            fan.len(),
            "vertex {v}: its triangles form {} fans, not one (a pinch)",
            "several"
        );
    }
    // Components by union-find over shared edges.
    let mut parent: Vec<usize> = (0..mesh.triangles.len()).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for (&(u, v), &t) in &directed {
        let s = directed[&(v, u)];
        let (a, b) = (root(&mut parent, t), root(&mut parent, s));
        parent[a] = b;
    }
    let components = (0..mesh.triangles.len())
        .filter(|&i| root(&mut parent, i) == i)
        .count();
    let edges = directed.len() / 2;
    Topology {
        vertices: nv,
        edges,
        triangles: mesh.triangles.len(),
        euler: nv as i64 - edges as i64 + mesh.triangles.len() as i64,
        components,
    }
}

/// The volume the mesh encloses (positive when its triangles face outwards).
pub fn volume(mesh: &Mesh) -> f64 {
    mesh.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| mesh.vertices[i as usize]);
            (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]))
                / 6.0
        })
        .sum()
}

/// The mesh's area.
pub fn area(mesh: &Mesh) -> f64 {
    mesh.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| mesh.vertices[i as usize]);
            let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            let w = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
            let n = [
                u[1] * w[2] - u[2] * w[1],
                u[2] * w[0] - u[0] * w[2],
                u[0] * w[1] - u[1] * w[0],
            ];
            0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
        })
        .sum()
}

/// How many triangles the vertical line through (x, y) crosses (a point of a triangle's
/// projection onto the xy-plane, edges included).
pub fn vertical_crossings(mesh: &Mesh, x: f64, y: f64) -> usize {
    mesh.triangles
        .iter()
        .filter(|t| {
            let [a, b, c] = t.map(|i| mesh.vertices[i as usize]);
            let side =
                |p: [f64; 3], q: [f64; 3]| (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0]);
            let (s1, s2, s3) = (side(a, b), side(b, c), side(c, a));
            (s1 >= 0.0 && s2 >= 0.0 && s3 >= 0.0) || (s1 <= 0.0 && s2 <= 0.0 && s3 <= 0.0)
        })
        .count()
}
