//! `ivjit render`, `ivjit mesh` and `.vm` tapes through the real binary, on the CPU: the
//! image's shape and classes, the picture, the mesh file, the tape read like the expression it
//! spells, and the errors.
use crate::common::binary;

use std::path::Path;
use std::process::{Command, Output};

fn ivjit(args: &[&str]) -> Output {
    Command::new(binary::ivjit_binary())
        .args(args)
        .output()
        .expect("ivjit runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

#[test]
fn npy_holds_the_classes_row_zero_at_the_top() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("half.npy");
    // y > 0.25 is inside (f < 0): the top rows; the region's y runs from -1 to 1.
    let o = ivjit(&[
        "render",
        "0.25 - y",
        "--backend",
        "cpu",
        "--size",
        "40x30",
        "--tiles",
        "8,2,1",
        "-o",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[30, 40]);
    assert_eq!(npy.dtype().descr(), "'|u1'");
    let classes: Vec<u8> = npy.into_vec().unwrap();
    for i in 0..30 {
        // Row i spans y in [1 - (i+1)/15, 1 - i/15]: inside when its bottom is above 0.25.
        let (bottom, top) = (1.0 - (i + 1) as f64 / 15.0, 1.0 - i as f64 / 15.0);
        let want = if bottom > 0.25 {
            1
        } else if top < 0.25 {
            0
        } else {
            2
        };
        assert!(
            classes[i * 40..(i + 1) * 40].iter().all(|&c| c == want),
            "row {i}: {:?}",
            &classes[i * 40..(i + 1) * 40]
        );
    }
}

#[test]
fn png_is_a_grey_picture_and_stats_go_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("disk.png");
    let o = ivjit(&[
        "render",
        "x^2 + y^2 - 0.5",
        "--backend",
        "cpu",
        "--size",
        "64x48",
        "-o",
        p(&out),
        "--stats",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("64x48 on the cpu"), "{}", stderr(&o));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&out).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (64, 48));
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    assert_eq!(buf[24 * 64 + 32], 0, "the center is inside: black");
    assert_eq!(buf[0], 255, "the corner is outside: white");
}

#[test]
fn a_tape_is_the_expression_it_spells() {
    let dir = tempfile::tempdir().unwrap();
    let tape = dir.path().join("circle.vm");
    std::fs::write(
        &tape,
        "# x^2 + y^2 - 0.5\n_x var-x\n_y var-y\n_a square _x\n_b square _y\n\
         _s add _a _b\n_h const 0.5\n_out sub _s _h\n",
    )
    .unwrap();
    let eval = |args: &[&str]| {
        let o = ivjit(args);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let vars = ["--var", "x=[-1,0.5]", "--var", "y=0.25", "--backend", "cpu"];
    let from_tape = eval(&[&["eval", "-f", p(&tape)][..], &vars].concat());
    let from_text = eval(&[&["eval", "x^2 + y^2 - 0.5"][..], &vars].concat());
    assert_eq!(from_tape, from_text);
    // Errors point into the tape.
    std::fs::write(&tape, "_x var-x\n_y cube _x\n").unwrap();
    let o = ivjit(&["eval", "-f", p(&tape), "--var", "x=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown opcode 'cube'"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("line 2, column 4"),
        "names the place: {}",
        stderr(&o)
    );
}

#[test]
fn bad_options_are_errors_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.npy");
    let fails = |args: &[&str], needle: &str| {
        let o = ivjit(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    };
    fails(
        &["render", "x + w", "-o", p(&out), "--backend", "cpu"],
        "'w'",
    );
    fails(
        &[
            "render",
            "x + z",
            "--zrange",
            "1,0",
            "-o",
            p(&out),
            "--backend",
            "cpu",
        ],
        "z0 < z1",
    );
    // A depth map by rays whose region is wider than the largest float: its pixels' step
    // overflows (the voxel search, the default, takes any finite region).
    fails(
        &[
            "render",
            "x + z",
            "--rays",
            "--region=-1.7e308,1.7e308,0,1",
            "-o",
            p(&out),
            "--backend",
            "cpu",
        ],
        "must be at most the largest float",
    );
    fails(
        &["render", "x", "--size", "12", "-o", p(&out)],
        "WIDTHxHEIGHT",
    );
    fails(
        &[
            "render",
            "x",
            "--region=1,0,0,1",
            "-o",
            p(&out),
            "--backend",
            "cpu",
        ],
        "x0 < x1",
    );
    fails(
        &[
            "render",
            "x",
            "--tiles",
            "8,3,1",
            "-o",
            p(&out),
            "--backend",
            "cpu",
        ],
        "tile sizes",
    );
    fails(&["render", "x", "-o", "image.bmp"], ".npy");
    assert!(!out.exists(), "no output after an error");
}

/// 3-D: the depth map of a ball seen from above. Every hit lies on or above the sphere (no
/// surface point above it: rigor) and within the resolution of it; lines that miss the ball
/// by a margin are NaN.
#[test]
fn depth_map_of_a_ball() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ball.npy");
    let (w, h, steps) = (40usize, 30usize, 512usize);
    let o = ivjit(&[
        "render",
        "x^2 + y^2 + z^2 - 0.8",
        "--rays",
        "--backend",
        "cpu",
        "--size",
        "40x30",
        "--steps",
        "512",
        "-o",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[h as u64, w as u64]);
    let depth: Vec<f64> = npy.into_vec().unwrap();
    let (mut hits, mut misses) = (0, 0);
    for i in 0..h {
        for j in 0..w {
            let x = -1.0 + (j as f64 + 0.5) * (2.0 / w as f64);
            let y = 1.0 - (i as f64 + 0.5) * (2.0 / h as f64);
            let r2 = x * x + y * y;
            let d = depth[i * w + j];
            if r2 < 0.8 - 1e-3 {
                let top = (0.8 - r2).sqrt();
                assert!(
                    d >= top - 1e-12,
                    "({i}, {j}): {d} below the sphere's top {top}"
                );
                assert!(
                    d <= top + 4.0 * 2.0 / steps as f64 + 0.05,
                    "({i}, {j}): {d} vs {top}"
                );
                hits += 1;
            } else if r2 > 0.8 + 0.05 {
                assert!(d.is_nan(), "({i}, {j}): {d} but the line misses the ball");
                misses += 1;
            }
        }
    }
    assert!(hits > 300 && misses > 100, "{hits} hits, {misses} misses");
}

/// 3-D by voxels (`--voxels`, the default): the depth map of a ball, exact. The voxels of 32 x 32 x 32 over
/// [-1, 1]³ are 1/16 a side, so every box and square is exact and a voxel is proven outside
/// exactly when it misses the closed ball `|p|² <= 0.6` (in sixteenths, `|p|² <= 153.6`); a
/// pixel's height is the top of its highest voxel meeting the ball, NaN when none does.
#[test]
fn voxel_depth_map_of_a_ball_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ball.npy");
    let n = 32usize;
    let o = ivjit(&[
        "render",
        "x*x + y*y + z*z - 0.6",
        "--voxels",
        "--backend",
        "cpu",
        "--size",
        "32x32",
        "--steps",
        "32",
        "--stats",
        "-o",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("32x32x32 depth map on the cpu"),
        "{}",
        stderr(&o)
    );
    let bytes = std::fs::read(&out).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[n as u64, n as u64]);
    let depth: Vec<f64> = npy.into_vec().unwrap();
    // The least square over the sixteenths [a, a + 1].
    let least = |a: i64| {
        if a <= 0 && 0 <= a + 1 {
            0
        } else {
            (a * a).min((a + 1) * (a + 1))
        }
    };
    let mut filled = 0;
    for i in 0..n as i64 {
        for j in 0..n as i64 {
            let (x, y) = (least(j - 16), least(15 - i));
            // Voxel k from the bottom spans the sixteenths [k - 17, k - 16].
            let top = (1..=n as i64).rev().find(|&k| x + y + least(k - 17) <= 153);
            let d = depth[(i * n as i64 + j) as usize];
            match top {
                Some(k) => {
                    assert_eq!(d, -1.0 + k as f64 / 16.0, "({i}, {j})");
                    filled += 1;
                }
                None => assert!(d.is_nan(), "({i}, {j}): {d} but the column misses the ball"),
            }
        }
    }
    assert!(filled > 400 && filled < n * n, "{filled} filled columns");
    // With --normals: (height, width, 4), the same heights, and a unit normal at every filled
    // column (each top voxel of this ball keeps a partial's sign), pointing up where the top
    // voxel is above z = 0; NaN where nothing is below the pixel. The PNG is RGB.
    let with = dir.path().join("normals.npy");
    let args = [
        "render",
        "x*x + y*y + z*z - 0.6",
        "--normals",
        "--backend",
        "cpu",
    ];
    let o = ivjit(
        &[
            &args[..],
            &[
                "--size",
                "32x32",
                "--steps",
                "32",
                "--stats",
                "-o",
                p(&with),
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("certified, 0 uncertain"),
        "{}",
        stderr(&o)
    );
    let bytes = std::fs::read(&with).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[n as u64, n as u64, 4]);
    let v: Vec<f64> = npy.into_vec().unwrap();
    for (p, cell) in v.chunks(4).enumerate() {
        let d = depth[p];
        assert!(cell[0] == d || (cell[0].is_nan() && d.is_nan()), "{p}");
        let len = (cell[1] * cell[1] + cell[2] * cell[2] + cell[3] * cell[3]).sqrt();
        if d.is_nan() {
            assert!(len.is_nan(), "{p}: a normal where nothing is below");
        } else {
            assert!((len - 1.0).abs() < 1e-12, "{p}: {cell:?}");
            assert!(d <= 1.0 / 16.0 || cell[3] > 0.0, "{p}: {cell:?}");
        }
    }
    let png = dir.path().join("normals.png");
    let o = ivjit(
        &[
            &args[..],
            &["--size", "32x32", "--steps", "32", "-o", p(&png)],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let decoder = png::Decoder::new(std::io::Cursor::new(std::fs::read(&png).unwrap()));
    let reader = decoder.read_info().unwrap();
    assert_eq!(reader.info().color_type, png::ColorType::Rgb);
    // --normals come with voxels only.
    let o = ivjit(&[&args[..], &["--rays", "-o", p(&png)]].concat());
    assert!(!o.status.success());
}

/// Runs `ivjit` with `args` and `--no-prune` writing to a temporary `.npy`, then again with
/// `pruned` added instead: both succeed and write the same bytes. Returns the second run's
/// stderr.
fn same_output_pruned(args: &[&str], pruned: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("plain.npy"), dir.path().join("pruned.npy"));
    let o = ivjit(&[args, &["-o", p(&a), "--no-prune"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ivjit(&[args, &["-o", p(&b)], pruned].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    stderr(&o)
}

/// `--prune` (tapes interpreted) writes the
/// same classes as the plain search, and `--stats` reports the programs' mean length per
/// round, shorter after the first; without a GPU, `--backend gpu` says so.
#[test]
fn pruned_render_writes_the_same_classes() {
    let model = "min(max(abs(x) - 0.5, abs(y) - 0.3), sqrt(sqr(x - 0.4) + sqr(y + 0.2)) - 0.35)";
    let base = [
        "render",
        model,
        "--size",
        "96x80",
        "--tiles",
        "16,4,1",
        "--backend",
        "cpu",
    ];
    let err = same_output_pruned(&base, &["--prune", "--stats"]);
    let means: Vec<f64> = err
        .lines()
        .filter_map(|l| l.split("boundary;").nth(1))
        .map(|rest| rest.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(means.len(), 3, "{err}");
    assert!(means[2] < means[0], "{err}");
    assert!(err.contains("tape interpreter"), "{err}");
    // With a function (run on the tape by its lowering): the tape interpreter, and here the
    // same classes (with point functions only pixels that one of the two leaves uncertain
    // could differ).
    let waves = "min(sin(4*x) - y, sqrt(sqr(x) + sqr(y)) - 0.6)";
    let args = ["render", waves, "--size", "64x48", "--backend", "cpu"];
    let err = same_output_pruned(&args, &["--prune", "--stats"]);
    assert!(err.contains("tape interpreter"), "{err}");
    // From 1024 pixels a side the CPU's plan is 128, 16, 1: a pass over a tape holds 256
    // tiles, more than the evaluator's chunk that runs sin (the fortieth session's passes
    // crashed there, at every such size).
    let args = ["render", waves, "--size", "1100x1030", "--backend", "cpu"];
    same_output_pruned(&args, &["--prune"]);
    // The GPU runs tapes; without one, the command says so.
    if ivjit::internals::gpu::detect().is_err() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("gpu.npy");
        let o = ivjit(&[
            "render",
            model,
            "--prune",
            "--backend",
            "gpu",
            "-o",
            p(&out),
        ]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("GPU"), "{}", stderr(&o));
    }
}

/// 3-D `--prune` (blocks of rays with pruned tapes, CPU) writes the plain depth map byte for
/// byte on the colonnade model (332 min/max), with shorter tapes per ray than the full one;
/// on the CPU it is the default.
#[test]
fn pruned_depth_map_is_the_plain_one() {
    let model = crate::common::tools::root().join("tests/data/models/colonnade.vm");
    let base = [
        "render",
        "-f",
        p(&model),
        "--size",
        "48x40",
        "--steps",
        "64",
        "--backend",
        "cpu",
    ];
    let err = same_output_pruned(&base, &["--prune", "--tiles", "16,4", "--stats"]);
    let means: Vec<f64> = err
        .lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split(';').nth(1))
        .map(|rest| rest.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(means.len(), 3, "{err}");
    assert!(means[2] < means[0] / 2.0, "{err}");
    // Without --prune or --no-prune, a map searched on the CPU is pruned (the model has
    // min/max); the ball without one is not.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("default.npy");
    let o = ivjit(&[&base[..], &["-o", p(&out), "--stats", "--rays"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("render, pruned:"), "{}", stderr(&o));
    // Without --rays, the map is by voxels.
    let o = ivjit(&[&base[..], &["-o", p(&out), "--stats"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("render, voxels:"), "{}", stderr(&o));
    let ball = [
        "render",
        "x^2 + y^2 + z^2 - 0.5",
        "--rays",
        "--size",
        "16x16",
        "--steps",
        "32",
        "--backend",
        "cpu",
        "--stats",
        "-o",
        p(&out),
    ];
    let o = ivjit(&ball);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("pruned"), "{}", stderr(&o));
}

/// A file's name where the expression goes (`ivjit render prospero.vm`) gets a hint to use
/// `-f`, not only the syntax error; an expression that merely fails to parse gets none.
#[test]
fn a_file_given_as_the_expression_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let tape = dir.path().join("circle.vm");
    std::fs::write(
        &tape,
        "_0 var-x\n_1 var-y\n_2 square _0\n_3 square _1\n_4 add _2 _3\n",
    )
    .unwrap();
    let out = dir.path().join("c.npy");
    let o = ivjit(&["render", p(&tape), "-o", p(&out), "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let want = format!("write `-f {}`", p(&tape));
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    let o = ivjit(&[
        "render",
        "-f",
        p(&tape),
        "-o",
        p(&out),
        "--size",
        "8x8",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ivjit(&["render", "x +", "-o", p(&out), "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("-f"), "{}", stderr(&o));
}

/// A 2-D render prunes by default where the expression has a min or max (the same classes as
/// `--no-prune`, the pruned report); without one it runs the whole program; `--prune` with
/// `--no-prune` is refused.
#[test]
fn two_dimensional_renders_prune_by_default_where_it_pays() {
    let model = "min(max(abs(x) - 0.5, abs(y) - 0.3), sqrt(sqr(x - 0.4) + sqr(y + 0.2)) - 0.35)";
    let base = ["render", model, "--size", "96x80", "--backend", "cpu"];
    let err = same_output_pruned(&base, &["--stats"]);
    assert!(
        err.contains("pruned") && err.contains("tape interpreter"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("disk.npy");
    let o = ivjit(
        &[
            "render",
            "x^2 + y^2 - 0.5",
            "--size",
            "16x16",
            "--backend",
            "cpu",
        ]
        .iter()
        .chain(&["-o", p(&out), "--stats"])
        .copied()
        .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("pruned"), "{}", stderr(&o));
    let o = ivjit(&["render", model, "--prune", "--no-prune", "-o", p(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `ivjit mesh` through the binary: an STL of the stated triangle count (84 + 50 bytes each,
/// every normal a unit vector pointing away from the ball's center), a tape file (-f), and the
/// errors a user can make (the output's extension, the region).
#[test]
fn mesh_writes_a_closed_ball_and_names_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ball.stl");
    let o = ivjit(&[
        "mesh",
        "x^2 + y^2 + z^2 - 0.5",
        "--depth",
        "4",
        "--backend",
        "cpu",
        "-o",
        p(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let triangles: usize = text.split(' ').next().unwrap().parse().unwrap();
    assert!(text.contains("16 cells a side"), "{text}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len(), 84 + 50 * triangles);
    assert_eq!(
        u32::from_le_bytes(bytes[80..84].try_into().unwrap()) as usize,
        triangles
    );
    let f = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as f64;
    for t in 0..triangles {
        let at = 84 + 50 * t;
        let n = [f(at), f(at + 4), f(at + 8)];
        let a = [f(at + 12), f(at + 16), f(at + 20)];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        assert!((len - 1.0).abs() < 1e-5, "triangle {t}: normal {n:?}");
        assert!(
            n[0] * a[0] + n[1] * a[1] + n[2] * a[2] > 0.0,
            "triangle {t} faces inwards"
        );
    }
    // A .vm tape: a sphere of radius 0.6 in the community's format.
    let tape = dir.path().join("ball.vm");
    std::fs::write(&tape, "_0 var-x\n_1 var-y\n_2 var-z\n_3 square _0\n_4 square _1\n_5 square _2\n_6 add _3 _4\n_7 add _6 _5\n_8 const 0.36\n_9 sub _7 _8\n").unwrap();
    let obj = dir.path().join("ball.obj");
    let o = ivjit(&[
        "mesh",
        "-f",
        p(&tape),
        "--depth",
        "3",
        "--backend",
        "cpu",
        "-o",
        p(&obj),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&obj).unwrap();
    assert!(text.lines().any(|l| l.starts_with("f ")));
    for (args, want) in [
        (
            vec!["mesh", "x + y + z", "-o", "out.png"],
            "expected a name ending in .stl, .ply or .obj",
        ),
        (
            vec![
                "mesh",
                "x + y + z",
                "--region",
                "-1,1,-1,1",
                "-o",
                "out.stl",
            ],
            "4 numbers",
        ),
        (
            vec![
                "mesh",
                "x + y + z",
                "--region=-1,1,-1,1,1,-1",
                "-o",
                "out.stl",
            ],
            "z range",
        ),
        (vec!["mesh", "x + w", "-o", "out.stl"], "'w'"),
        (
            vec!["mesh", "x + y + z", "--depth", "12", "-o", "out.stl"],
            "depth 12",
        ),
    ] {
        let o = Command::new(binary::ivjit_binary())
            .args(&args)
            .args(["--backend", "cpu"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}
