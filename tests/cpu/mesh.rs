//! `ivjit::search::mesh`: closed, 2-manifold, outward meshes whose vertices lie on f = 0, on
//! shapes whose topology and volume are known exactly, and a wall thinner than the lattice
//! that point sampling loses and the witness search keeps. The checker is
//! `common::mesh_check` (independent of the mesher).

use crate::common::mesh_check::{area, topology, vertical_crossings, volume};
use ivjit::search::mesh::{
    mesh,
    write::{write, MeshFormat},
    Mesh, MeshOptions,
};
use ivjit::{BackendChoice, Evaluator, Expression, Precision};

fn run(src: &str, p: Precision, opts: &MeshOptions) -> Mesh {
    let expr = Expression::parse(src).unwrap();
    let ev = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
    mesh(&ev, opts).unwrap()
}

fn opts(depth: u32) -> MeshOptions {
    MeshOptions {
        depth,
        ..MeshOptions::default()
    }
}

/// The largest distance from a vertex to the segment's true sign change: half the final
/// bracket, of a segment at most two cell diagonals long.
fn placement_bound(o: &MeshOptions) -> f64 {
    let cell = (o.region[1] - o.region[0])
        .max(o.region[3] - o.region[2])
        .max(o.region[5] - o.region[4])
        / (1u64 << o.depth) as f64;
    2.0 * 3f64.sqrt() * cell * 0.5f64.powi(o.bisections as i32 + 1)
}

#[test]
fn a_sphere_is_one_closed_outward_surface_on_the_sphere() {
    let r = 0.6f64;
    for p in [Precision::F64, Precision::F32] {
        let o = opts(5);
        let m = run("x^2 + y^2 + z^2 - 0.36", p, &o);
        let t = topology(&m);
        assert_eq!((t.euler, t.components), (2, 1), "{p:?}: {t:?}");
        let exact = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let v = volume(&m);
        assert!(
            (v - exact).abs() < 0.02 * exact,
            "{p:?}: volume {v} against {exact}"
        );
        // No folds or zigzags: the area within 1 % of the sphere's (measured 0.99956 of it).
        let (a, sphere) = (area(&m), 4.0 * std::f64::consts::PI * r * r);
        assert!(
            (a - sphere).abs() < 0.01 * sphere,
            "{p:?}: area {a} against {sphere}"
        );
        // f32 rounds the points' coordinates: a few ulps of 0.6 more.
        let bound = placement_bound(&o) + if p == Precision::F32 { 1e-6 } else { 1e-12 };
        for q in &m.vertices {
            let d = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt() - r;
            assert!(
                d.abs() <= bound,
                "{p:?}: vertex {q:?} is {d} from the sphere"
            );
        }
        assert_eq!(m.stats.cells, 1 << 15);
        assert!(m.stats.outside_cells > 0 && m.stats.inside_cells > 0);
        assert_eq!(
            m.stats.outside_cells + m.stats.inside_cells + m.stats.boundary_cells,
            m.stats.cells
        );
    }
}

#[test]
fn a_torus_has_euler_characteristic_zero() {
    // R = 0.5, r = 0.2.
    let m = run(
        "sqr(x^2 + y^2 + z^2 + 0.25 - 0.04) - 4*0.25*(x^2 + y^2)",
        Precision::F64,
        &opts(5),
    );
    let t = topology(&m);
    assert_eq!((t.euler, t.components), (0, 1), "{t:?}");
    let exact = 2.0 * std::f64::consts::PI.powi(2) * 0.5 * 0.2f64.powi(2);
    let v = volume(&m);
    assert!(
        (v - exact).abs() < 0.05 * exact,
        "volume {v} against {exact}"
    );
}

#[test]
fn two_spheres_give_two_components() {
    let m = run(
        "min(sqrt(sqr(x - 0.5) + y^2 + z^2), sqrt(sqr(x + 0.5) + y^2 + z^2)) - 0.3",
        Precision::F64,
        &opts(5),
    );
    let t = topology(&m);
    assert_eq!((t.euler, t.components), (4, 2), "{t:?}");
}

/// A wall 0.002 thick at z = 0.013: the lattice of depth 5 has points at z = 0 and z = 0.03125
/// only, so every sample is outside. Without witnesses the mesh is empty (what a point sampler
/// of the same lattice gives); with them (pieces of 1/16 of a cell: 0.0039, so one piece's
/// center falls in the wall) it is a closed sheet that every vertical line through the region
/// crosses (top and bottom), with every vertex on the wall.
#[test]
fn a_wall_thinner_than_the_lattice_is_kept() {
    let wall = "abs(z - 0.013) - 0.001";
    let sampled = run(
        wall,
        Precision::F64,
        &MeshOptions {
            witness_levels: 0,
            ..opts(5)
        },
    );
    assert!(
        sampled.triangles.is_empty(),
        "point samples should miss the wall"
    );
    let o = MeshOptions {
        witness_levels: 4,
        ..opts(5)
    };
    let m = run(wall, Precision::F64, &o);
    let t = topology(&m);
    assert_eq!((t.euler, t.components), (2, 1), "{t:?}");
    assert!(m.stats.edge_witnesses > 0, "{:?}", m.stats);
    let bound = placement_bound(&o) + 1e-12;
    for q in &m.vertices {
        assert!(
            (q[2] - 0.013).abs() <= 0.001 + bound,
            "vertex {q:?} is off the wall"
        );
    }
    for i in 0..20 {
        for j in 0..20 {
            // Inside the cells next to the region's faces: there the faces (outside by
            // definition) end the sheet within a cell.
            let (x, y) = (
                -0.9 + 0.09 * i as f64 + 0.003,
                -0.9 + 0.09 * j as f64 + 0.007,
            );
            assert!(
                vertical_crossings(&m, x, y) >= 2,
                "the line through ({x}, {y}) misses the wall: a hole"
            );
        }
    }
    let v = volume(&m);
    assert!(v > 0.0 && v < 4.0 * (0.002 + 2.0 * bound), "volume {v}");
}

/// A thin rod along x (radius 0.02 where cells are 0.125 wide, 0.042 or more from every
/// lattice line): found inside cells and on faces, kept as one closed tube.
#[test]
fn a_rod_thinner_than_the_lattice_is_kept() {
    let rod = "sqrt(sqr(y - 0.03) + sqr(z + 0.03)) - 0.02";
    let sampled = run(
        rod,
        Precision::F64,
        &MeshOptions {
            witness_levels: 0,
            ..opts(4)
        },
    );
    assert!(sampled.triangles.is_empty());
    let m = run(rod, Precision::F64, &opts(4));
    let t = topology(&m);
    assert_eq!((t.euler, t.components), (2, 1), "{t:?} {:?}", m.stats);
    let mut xs: Vec<f64> = m.vertices.iter().map(|q| q[0]).collect();
    xs.sort_by(f64::total_cmp);
    // It ends in the cells next to the region's faces x = -1 and 1 (outside by definition),
    // past their inner sides at -0.875 and 0.875.
    assert!(
        xs[0] < -0.875 && xs[xs.len() - 1] > 0.875,
        "the rod spans x in [-1, 1]: {} {}",
        xs[0],
        xs[xs.len() - 1]
    );
    // No gap along the rod: vertices every tenth of the way.
    for w in xs.windows(2) {
        assert!(
            w[1] - w[0] < 0.13,
            "a gap along the rod between x = {} and {}",
            w[0],
            w[1]
        );
    }
}

/// The region's faces count as outside: a half-space and the whole region close into boxes.
#[test]
fn surfaces_leaving_the_region_are_closed_by_caps() {
    let half = run("x", Precision::F64, &opts(4));
    let t = topology(&half);
    assert_eq!((t.euler, t.components), (2, 1), "{t:?}");
    let v = volume(&half);
    assert!(v > 3.7 && v <= 4.0 + 1e-9, "half the region: volume {v}");
    let all = run("-1", Precision::F64, &opts(3));
    assert_eq!(topology(&all).euler, 2);
    let v = volume(&all);
    assert!(v > 7.0 && v <= 8.0 + 1e-9, "the whole region: volume {v}");
    assert!(run("1", Precision::F64, &opts(3)).triangles.is_empty());
    // Other regions, not cubes: orientation and caps hold under scaling.
    let o = MeshOptions {
        region: [-2.0, 2.0, -0.5, 0.5, 0.0, 3.0],
        ..opts(4)
    };
    let m = run("x^2 + y^2 + sqr(z - 1) - 1", Precision::F64, &o);
    let t = topology(&m);
    assert_eq!((t.euler, t.components), (2, 1), "{t:?}");
    let v = volume(&m);
    // The unit ball cut to |y| <= 0.5: pi (0.5 * 2 - (2 * 0.125) / 3) * ... computed exactly:
    // the slab |y| <= a of the unit ball has volume pi (2a - 2a^3/3).
    let exact = std::f64::consts::PI * (1.0 - 2.0 * 0.125 / 3.0);
    assert!(
        (v - exact).abs() < 0.05 * exact,
        "volume {v} against {exact}"
    );
}

/// The interval classes in space and in f: huge, subnormal and largest-float coordinates, f
/// unbounded at poles, f undefined on part of the region: the search's boxes and points stay
/// rigorous and the mesh stays closed.
#[test]
fn huge_regions_and_poles_keep_the_mesh_closed() {
    let big = MeshOptions {
        region: [-1e300, 1e300, -1e300, 1e300, -1e300, 1e300],
        ..opts(3)
    };
    let m = run("x - 1e299", Precision::F64, &big);
    assert_eq!(topology(&m).euler, 2);
    for q in &m.vertices {
        assert!(q.iter().all(|t| t.is_finite() && t.abs() <= 1e300));
    }
    // Subnormal coordinates: a region 2e-310 wide, the plane x = 1e-311 through it.
    let tiny = MeshOptions {
        region: [-1e-310, 1e-310, -1e-310, 1e-310, -1e-310, 1e-310],
        ..opts(3)
    };
    let m = run("x - 1e-311", Precision::F64, &tiny);
    assert_eq!(topology(&m).euler, 2);
    // Each vertex within half its last bracket (a 2^-11 of a lattice edge) of the plane.
    let slack = 2.0 * 3f64.sqrt() * 2.5e-311 / 2048.0;
    for q in &m.vertices {
        assert!(q[0] <= 1e-311 + slack && q[0] >= -1e-310, "{q:?}");
    }
    // f undefined on part of the region (sqrt and log of negative x: empty enclosures), and a
    // region that reaches the largest doubles: still closed, every vertex in the region.
    for src in ["sqrt(x) - 0.5 + 0*y*z", "log(x + 0.5) + y*y + z*z"] {
        let m = run(src, Precision::F64, &opts(4));
        assert!(!m.triangles.is_empty(), "{src}");
        assert_eq!(topology(&m).components, 1, "{src}");
    }
    let max = MeshOptions {
        region: [-f64::MAX, f64::MAX, -1.0, 1.0, -1.0, 1.0],
        ..opts(3)
    };
    let m = run("x - 1e308", Precision::F64, &max);
    assert_eq!(topology(&m).euler, 2);
    assert!(m.vertices.iter().all(|q| q.iter().all(|t| t.is_finite())));
    // 1/x changes sign through its pole at x = 0 and at no zero: the mesh may show the pole's
    // plane or not, but it is closed either way.
    let pole = run("1/x + y", Precision::F64, &opts(4));
    topology(&pole);
    let pole = run("1/(x - 0.3) - 1/(y + 0.2)", Precision::F64, &opts(4));
    topology(&pole);
}

#[test]
fn bad_options_and_variables_are_errors() {
    let expr = Expression::parse("x + w").unwrap();
    let ev = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    let e = mesh(&ev, &opts(3)).unwrap_err().to_string();
    assert!(e.contains("'w'") && e.contains("x, y and z"), "{e}");
    let expr = Expression::parse("x + y").unwrap();
    let ev = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    for (o, what) in [
        (
            MeshOptions {
                depth: 0,
                ..opts(3)
            },
            "depth 0",
        ),
        (
            MeshOptions {
                depth: 12,
                ..opts(3)
            },
            "depth 12",
        ),
        (
            // Steps of 8 / 2^9 where the coordinates' ulp is 2: within rounding error.
            MeshOptions {
                region: [1e16, 1e16 + 8.0, -1.0, 1.0, -1.0, 1.0],
                ..opts(5)
            },
            "too narrow for its magnitude",
        ),
        (
            MeshOptions {
                region: [1.0, -1.0, -1.0, 1.0, -1.0, 1.0],
                ..opts(3)
            },
            "x range",
        ),
        (
            MeshOptions {
                region: [-1.0, 1.0, -1.0, 1.0, -1.0, f64::INFINITY],
                ..opts(3)
            },
            "z range",
        ),
    ] {
        let e = mesh(&ev, &o).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
}

/// The three formats: counts in the headers, OBJ reads back to the same doubles.
#[test]
fn formats_hold_the_mesh() {
    let m = run("x^2 + y^2 + z^2 - 0.5", Precision::F64, &opts(3));
    let (nv, nt) = (m.vertices.len(), m.triangles.len());
    let mut stl = Vec::new();
    write(&m, MeshFormat::Stl, &mut stl).unwrap();
    assert_eq!(stl.len(), 84 + 50 * nt);
    assert_eq!(
        u32::from_le_bytes(stl[80..84].try_into().unwrap()) as usize,
        nt
    );
    let mut ply = Vec::new();
    write(&m, MeshFormat::Ply, &mut ply).unwrap();
    let header_end = ply.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
    let header = std::str::from_utf8(&ply[..header_end]).unwrap();
    assert!(header.contains(&format!("element vertex {nv}\n")));
    assert!(header.contains(&format!("element face {nt}\n")));
    assert_eq!(ply.len(), header_end + 12 * nv + 13 * nt);
    let mut obj = Vec::new();
    write(&m, MeshFormat::Obj, &mut obj).unwrap();
    let text = String::from_utf8(obj).unwrap();
    let vs: Vec<[f64; 3]> = text
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let p: Vec<f64> = l.split(' ').map(|t| t.parse().unwrap()).collect();
            [p[0], p[1], p[2]]
        })
        .collect();
    assert_eq!(vs, m.vertices);
    assert_eq!(text.lines().filter(|l| l.starts_with("f ")).count(), nt);
}

fn run_with_normals(src: &str, opts: &MeshOptions) -> Mesh {
    let expr = Expression::parse(src).unwrap();
    let (g, _) = expr.gradient().unwrap();
    let p = Precision::F64;
    let ev = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
    let grad = Evaluator::new(&g, p, BackendChoice::Cpu).unwrap();
    ivjit::search::mesh::mesh_with_normals(&ev, &grad, opts).unwrap()
}

/// Normals from the gradient: on a sphere every one is certain and within the enclosure's
/// width of the exact normal (the position's direction); on a half-space the plane's are
/// certain and exactly (1, 0, 0), the caps' (outside by definition) are not; at a cone's apex
/// neither the normals nor the cells' topology can be certain. The mesh itself is the one
/// `mesh` gives.
#[test]
fn normals_are_certain_where_the_gradient_proves_them() {
    let o = opts(5);
    let m = run_with_normals("x^2 + y^2 + z^2 - 0.36", &o);
    assert_eq!(
        m.triangles,
        run("x^2 + y^2 + z^2 - 0.36", Precision::F64, &o).triangles
    );
    assert_eq!(
        (m.normals.len(), m.normal_certain.len()),
        (m.vertices.len(), m.vertices.len())
    );
    assert!(m.normal_certain.iter().all(|&c| c) && m.stats.uncertain_normals == 0);
    for (v, n) in m.vertices.iter().zip(&m.normals) {
        let r = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let err = (0..3).map(|d| (n[d] - v[d] / r).abs()).fold(0.0, f64::max);
        assert!(err < 1e-3, "vertex {v:?}: normal {n:?}");
    }
    // Every boundary cell of this sphere has a coordinate bounded away from 0.
    assert_eq!(m.stats.certain_cells, m.stats.boundary_cells);

    let h = run_with_normals("x", &opts(4));
    let mut plane = 0;
    for ((v, n), &c) in h.vertices.iter().zip(&h.normals).zip(&h.normal_certain) {
        let on_a_face = v.iter().any(|t| t.abs() > 1.0 - 1.0 / 16.0);
        if !on_a_face && v[0].abs() < 1e-3 {
            plane += 1;
            assert!(c && *n == [1.0, 0.0, 0.0], "vertex {v:?}: {n:?} {c}");
        }
        if v[0] < -1.0 + 1e-3 {
            assert!(!c, "a cap's vertex {v:?} has a certain normal");
        }
    }
    assert!(plane > 100);

    let cone = run_with_normals("x^2 + y^2 - z^2", &opts(4));
    topology(&cone);
    assert!(
        cone.stats.certain_cells < cone.stats.boundary_cells,
        "{:?}",
        cone.stats
    );
    let apex = cone
        .vertices
        .iter()
        .zip(&cone.normal_certain)
        .filter(|(v, _)| v.iter().all(|t| t.abs() < 0.05));
    assert!(apex.clone().count() > 0 && apex.clone().all(|(_, &c)| !c));

    // The files carry them.
    let mut ply = Vec::new();
    write(&m, MeshFormat::Ply, &mut ply).unwrap();
    let header_end = ply.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
    assert!(std::str::from_utf8(&ply[..header_end])
        .unwrap()
        .contains("property float nz\n"));
    assert_eq!(
        ply.len(),
        header_end + 24 * m.vertices.len() + 13 * m.triangles.len()
    );
    let mut obj = Vec::new();
    write(&m, MeshFormat::Obj, &mut obj).unwrap();
    let text = String::from_utf8(obj).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("vn ")).count(),
        m.vertices.len()
    );
    assert!(text
        .lines()
        .any(|l| l.starts_with("f ") && l.contains("//")));
}
