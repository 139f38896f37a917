//! The `ivjit` command line, driven exactly as a user drives it (on the CPU backend, so that the
//! results do not depend on the machine).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::binary as support;
use support::ivjit_binary as binary;

fn ivjit(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .output()
        .expect("ivjit runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn eval_prints_one_line_per_output() {
    let o = ivjit(&[
        "eval",
        "x^2 - y, x / y, sqrt(y - 1)",
        "--var",
        "x=[-1,2]",
        "--var",
        "y=0.5",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines, ["[-0.5, 3.5]", "[-2, 4]", "[empty]"]);
}

#[test]
fn eval_prints_decorations_when_asked() {
    // sqrt is undefined on part of [-1, 4] (trv); floor is defined but jumps (def); 1/y is
    // continuous on y's box, which the user decorated dac; x/y on a NaI y is NaI.
    let o = ivjit(&[
        "eval",
        "sqrt(x) + 1/y, floor(x), 1/y, x/z",
        "--decorations",
        "--var",
        "x=[-1,4]",
        "--var",
        "y=[1,2]_dac",
        "--var",
        "z=[nai]",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(
        lines,
        ["[0.5, 3]_trv", "[-1, 4]_def", "[0.5, 1]_dac", "[nai]"]
    );
    let o = ivjit(&[
        "eval",
        "sqrt(x)",
        "--decorations",
        "--var",
        "x=[0,4]",
        "--format",
        "json",
        "--backend",
        "cpu",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["outputs"][0]["dec"], "com");
    assert_eq!(doc["outputs"][0]["hi"], "2");
    // Without --decorations, outputs are as before, and a decorated value says what to add.
    let o = ivjit(&["eval", "x", "--var", "x=[1,2]_com", "--backend", "cpu"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("needs --decorations"), "{}", stderr(&o));
    // A decoration the interval cannot carry is refused, with the one to write.
    let o = ivjit(&[
        "eval",
        "x",
        "--decorations",
        "--var",
        "x=[1,inf]_com",
        "--backend",
        "cpu",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("write _dac or weaker"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn decimal_inputs_are_rounded_outward() {
    let o = ivjit(&["eval", "x", "--var", "x=0.1", "--backend", "cpu"]);
    // The upper bound, the double just above 0.1, prints outward: 0.1 itself would cut it.
    assert_eq!(stdout(&o), "[0.09999999999999999, 0.10000000000000001]\n");
    let o = ivjit(&[
        "eval",
        "x",
        "--var",
        "x=[0.1, 0.1]",
        "--backend",
        "cpu",
        "--precision",
        "f32",
    ]);
    assert_eq!(stdout(&o), "[0.099999994, 0.100000002]\n");
    let o = ivjit(&[
        "eval",
        "x + 1",
        "--var",
        "x=[-inf, 0x1p-3]",
        "--backend",
        "cpu",
    ]);
    assert_eq!(stdout(&o), "[-inf, 1.125]\n");
}

/// Printed bounds are outward as real numbers, in every format (issue 30: f32 bounds printed
/// as the shortest f32 decimal excluded the input, `[0.099999994, 0.1]` for an f32 box holding
/// 0.1000000001): each printed interval, read back as decimals, holds the computed one, and
/// reads back as the same floats when rounded to nearest.
#[test]
fn printed_bounds_are_outward_in_every_format() {
    let cases: &[(&str, &str, &str)] = &[
        ("x", "x=[0.1000000001,0.1000000002]", "f32"),
        ("x*x", "x=[1e19,1e20]", "f32"),
        ("x/3", "x=[1,2]", "f64"),
        ("x/3", "x=[1,2]", "f32"),
        ("-x/7", "x=[1e-300,1e300]", "f64"),
    ];
    for (expr, var, p) in cases {
        for format in ["text", "json"] {
            let o = ivjit(&[
                "eval",
                expr,
                "--var",
                var,
                "--precision",
                p,
                "--backend",
                "cpu",
                "--format",
                format,
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            let out = stdout(&o);
            let (lo, hi) = if format == "text" {
                let t = out.trim().trim_start_matches('[').trim_end_matches(']');
                let (a, b) = t.split_once(", ").unwrap();
                (a.to_string(), b.to_string())
            } else {
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                let o = &v["outputs"][0];
                (
                    o["lo"].as_str().unwrap().to_string(),
                    o["hi"].as_str().unwrap().to_string(),
                )
            };
            // The exact values of the decimals against the floats they read back as.
            let (el, eh) = (
                ivjit::internals::syntax::number::parse_enclosure(&lo).unwrap(),
                ivjit::internals::syntax::number::parse_enclosure(&hi).unwrap(),
            );
            let (fl, fh): (f64, f64) = if *p == "f32" {
                (
                    lo.parse::<f32>().unwrap() as f64,
                    hi.parse::<f32>().unwrap() as f64,
                )
            } else {
                (lo.parse().unwrap(), hi.parse().unwrap())
            };
            assert!(
                el.hi <= fl,
                "{expr} on {var} ({p}, {format}): {lo} is above {fl:e}"
            );
            assert!(
                eh.lo >= fh,
                "{expr} on {var} ({p}, {format}): {hi} is below {fh:e}"
            );
        }
    }
    // The input of the first case is inside the printed interval.
    let o = ivjit(&[
        "eval",
        "x",
        "--var",
        "x=[0.1000000001,0.1000000002]",
        "--precision",
        "f32",
        "--backend",
        "cpu",
    ]);
    assert_eq!(stdout(&o), "[0.099999994, 0.100000002]\n");
}

#[test]
fn json_output() {
    let o = ivjit(&[
        "eval",
        "x + 1, sqrt(x)",
        "--var",
        "x=[-3,-2]",
        "--format",
        "json",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["precision"], "f64");
    assert_eq!(v["outputs"][0]["lo"], "-2");
    assert_eq!(v["outputs"][0]["hi"], "-1");
    assert_eq!(v["outputs"][1]["empty"], true);
}

#[test]
fn syntax_errors_show_a_caret_and_exit_2() {
    let o = ivjit(&["eval", "x + * 2", "--var", "x=1", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("x + * 2"), "{e}");
    assert!(e.contains('^'), "{e}");
}

#[test]
fn unknown_function_and_arity_exit_2() {
    let o = ivjit(&["eval", "sqrtt(x)", "--var", "x=1", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown function 'sqrtt'"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("sqrt"), "suggests the right name");
    let o = ivjit(&["eval", "min(x)", "--var", "x=1", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("min takes 2 arguments, found 1"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn missing_and_unknown_variables_exit_2() {
    let o = ivjit(&["eval", "x + y", "--var", "x=1", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("variable 'y' has no value"), "{e}");
    assert!(
        e.contains("x + y") && e.contains('^'),
        "points into the expression: {e}"
    );
    let o = ivjit(&[
        "eval",
        "x",
        "--var",
        "x=1",
        "--var",
        "z=2",
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no variable 'z'"), "{}", stderr(&o));
    let o = ivjit(&["eval", "x", "--var", "x=[2,1]", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("greater than"), "{}", stderr(&o));
}

#[test]
fn gpu_backend_without_gpu_fails_clearly() {
    if ivjit::internals::gpu::detect().is_ok() {
        return; // this machine has a GPU: nothing to check here
    }
    let o = ivjit(&["eval", "x", "--var", "x=1", "--backend", "gpu"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no GPU"), "{}", stderr(&o));
    // auto falls back to the CPU and says so
    let o = ivjit(&["eval", "x", "--var", "x=1", "--format", "json"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("\"backend\":\"cpu\""), "{}", stdout(&o));
    assert!(stderr(&o).contains("CPU"), "{}", stderr(&o));
}

#[test]
fn csv_batch_in_order_with_empty() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.csv");
    std::fs::write(
        &input,
        "x_lo,x_hi,y_lo,y_hi\n1,2,0.5,0.5\n-1,1,0x1p-1,1\n-4,-1,empty,empty\n0.25,0.25,-inf,inf\n",
    )
    .unwrap();
    let out = dir.path().join("out.csv");
    let o = ivjit(&[
        "eval",
        "x*y, sqrt(x)",
        "--input",
        input.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text,
        // sqrt(2)'s upper bound prints outward (1.4142135623730951 is below the double).
        "out1_lo,out1_hi,out2_lo,out2_hi\n\
         0.5,1,1,1.4142135623730952\n\
         -1,1,0,1\n\
         empty,empty,empty,empty\n\
         -inf,inf,0.5,0.5\n"
    );
    // One output: columns lo,hi, to stdout.
    let o = ivjit(&[
        "eval",
        "x + y",
        "--input",
        input.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("lo,hi\n1.5,2.5\n"), "{}", stdout(&o));
}

#[test]
fn malformed_row_names_row_and_column_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.csv");
    std::fs::write(&input, "x_lo,x_hi\n1,2\n3,abc\n").unwrap();
    let out = dir.path().join("out.csv");
    let o = ivjit(&[
        "eval",
        "x",
        "--input",
        input.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("row 2") && e.contains("x_hi") && e.contains("abc"),
        "{e}"
    );
    assert!(!Path::new(&out).exists(), "no partial output file");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left behind"
    );
}

#[test]
fn ir_and_ptx_subcommands() {
    let o = ivjit(&["ir", "x*x + x^3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ir = stdout(&o);
    assert!(ir.contains("sqr") && ir.contains("pown"), "{ir}");
    let o = ivjit(&["ptx", "x*y", "--precision", "f32"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ptx = stdout(&o);
    assert!(
        ptx.contains(".rm.f32") && ptx.contains(".rp.f32") && ptx.contains(".entry"),
        "{ptx}"
    );
    let o = ivjit(&["functions"]);
    assert!(stdout(&o).contains("pown"));
    // Every function lists its derivative rule.
    let listed = stdout(&o)
        .lines()
        .filter(|l| {
            let name = l.split('(').next().unwrap_or("");
            l.contains('(') && !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric())
        })
        .count();
    let rules = stdout(&o).matches("    derivative: ").count();
    assert_eq!(listed, rules, "{}", stdout(&o));
}

#[test]
fn expression_from_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("e.txt");
    std::fs::write(&f, "# a comment\nlet t = x + 1;\nt * t\n").unwrap();
    let o = ivjit(&[
        "eval",
        "-f",
        f.to_str().unwrap(),
        "--var",
        "x=[0,1]",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[1, 4]\n");
}

/// `eval --gradient`: the partial derivatives after each output, in text and JSON, with
/// "undefined" where a jump may lie in the box and empty where the function is; batches are
/// refused with what to do; `ir --gradient` lists the outputs.
#[test]
fn eval_gradient_prints_the_partial_derivatives() {
    let o = ivjit(&[
        "eval",
        "x^2*y",
        "--var",
        "x=[1,2]",
        "--var",
        "y=3",
        "--gradient",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[3, 12]\n  d/dx [6, 12]\n  d/dy [1, 4]\n");
    let o = ivjit(&[
        "eval",
        "floor(y) + x, sqrt(x - 3)",
        "--var",
        "x=[1,2]",
        "--var",
        "y=[0.5,1.5]",
        "--gradient",
        "--format",
        "json",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let outs = &doc["outputs"];
    // Variables in order of first appearance: y, x.
    assert_eq!(outs[0]["gradient"][0]["undefined"], true, "{doc}");
    assert_eq!(outs[0]["gradient"][1]["undefined"], true, "{doc}");
    assert_eq!(outs[1]["empty"], true, "{doc}");
    assert_eq!(outs[1]["gradient"][0]["empty"], true, "{doc}");
    assert_eq!(outs[1]["gradient"][1]["empty"], true, "{doc}");
    let o = ivjit(&[
        "eval",
        "floor(y) + x",
        "--var",
        "x=[1,2]",
        "--var",
        "y=[0.25,0.75]",
        "--gradient",
        "--format",
        "json",
        "--backend",
        "cpu",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["outputs"][0]["gradient"][0]["hi"], "0", "{doc}");
    assert_eq!(doc["outputs"][0]["gradient"][1]["lo"], "1", "{doc}");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("b.csv");
    // Batches: d_NAME columns after each output, `undefined` where a jump may lie in the box
    // (floor(y) jumps at 1 and 3: the second box, [2, 3], holds 3), exact values here.
    std::fs::write(
        &csv,
        "x_lo,x_hi,y_lo,y_hi\n1,2,0.25,0.75\n1,2,2,3\n-1,1,4,4\n",
    )
    .unwrap();
    let o = ivjit(&[
        "eval",
        "x^2*y + floor(y), x - y",
        "--input",
        csv.to_str().unwrap(),
        "--gradient",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(
        lines,
        [
            "out1_lo,out1_hi,out1_d_x_lo,out1_d_x_hi,out1_d_y_lo,out1_d_y_hi,\
             out2_lo,out2_hi,out2_d_x_lo,out2_d_x_hi,out2_d_y_lo,out2_d_y_hi",
            // 2xy on [1,2]x[0.25,0.75] is [0.5, 3]; x^2 is [1, 4].
            "0.25,3,0.5,3,1,4,0.25,1.75,1,1,-1,-1",
            "4,15,undefined,undefined,undefined,undefined,-2,0,1,1,-1,-1",
            // At a point y = 4 floor is constant; 2xy on x in [-1, 1] is [-8, 8].
            "4,8,-8,8,0,1,-5,-3,1,1,-1,-1",
        ]
    );
    // .npy: NaN pairs where undefined, 2 * 2 * (1 + 2) columns.
    let npy = dir.path().join("g.npy");
    let o = ivjit(&[
        "eval",
        "x^2*y + floor(y), x - y",
        "--input",
        csv.to_str().unwrap(),
        "--gradient",
        "--backend",
        "cpu",
        "--output",
        npy.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&npy).unwrap();
    let arr = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(arr.shape(), &[3, 12]);
    let v: Vec<f64> = arr.into_vec().unwrap();
    assert_eq!(&v[0..6], &[0.25, 3.0, 0.5, 3.0, 1.0, 4.0]);
    assert!(v[12 + 2..12 + 6].iter().all(|d| d.is_nan()) && v[12] == 4.0);
    let o = ivjit(&["ir", "x*y", "--gradient"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("out2: df0/dx; out3: df0/dy"),
        "{}",
        stdout(&o)
    );
}

/// `eval --mean-value`: the centered form, narrower on a small box than the natural extension
/// and containing it where it must; batches too; not together with --gradient.
#[test]
fn eval_mean_value_is_narrower_on_small_boxes() {
    let run = |extra: &[&str]| {
        let o = ivjit(
            &[
                &[
                    "eval",
                    "x^2 - 2*x",
                    "--var",
                    "x=[0.9,1.1]",
                    "--backend",
                    "cpu",
                ],
                extra,
            ]
            .concat(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let bounds = |s: String| -> (f64, f64) {
        let s = s
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let (a, b) = s.split_once(',').unwrap();
        (a.trim().parse().unwrap(), b.trim().parse().unwrap())
    };
    let (nl, nh) = bounds(run(&[]));
    let (cl, ch) = bounds(run(&["--mean-value"]));
    assert!(
        nl <= cl && ch <= nh && (ch - cl) < (nh - nl) / 5.0,
        "{cl} {ch} vs {nl} {nh}"
    );
    assert!(
        cl <= -1.0 && -0.99 <= ch,
        "the minimum -1 at x = 1 is inside"
    );
    let o = ivjit(&["eval", "x", "--var", "x=1", "--mean-value", "--gradient"]);
    assert!(!o.status.success());
}

/// `eval --monotone`: exact where f is monotone on the box (x^2 - 2x rises on [2, 3] from 0 to
/// 3, where the natural extension says [-2, 5]); a box across tan's pole is not a monotone
/// piece (its enclosure stays unbounded); not with --mean-value.
#[test]
fn eval_monotone_is_exact_on_monotone_pieces() {
    let run = |e: &str, x: &str, extra: &[&str]| {
        let var = format!("x={x}");
        let o = ivjit(&[&["eval", e, "--var", &var, "--backend", "cpu"], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).trim().to_string()
    };
    assert_eq!(run("x^2 - 2*x", "[2,3]", &[]), "[-2, 5]");
    assert_eq!(run("x^2 - 2*x", "[2,3]", &["--monotone"]), "[0, 3]");
    assert_eq!(run("tan(x)", "[1,2]", &["--monotone"]), "[-inf, inf]");
    let o = ivjit(&["eval", "x", "--var", "x=1", "--mean-value", "--monotone"]);
    assert!(!o.status.success());
}

/// `ivjit minimize`: the six-hump camel's certified enclosure holds the known minimum
/// (-1.0316284534898774, to the digits the literature gives) and is at most --tol wide; a
/// minimum on the boundary is exact; bad boxes exit 2 naming the variable.
#[test]
fn minimize_encloses_the_minimum() {
    let camel = "(4 - 2.1*x^2 + x^4/3)*x^2 + x*y + (-4 + 4*y^2)*y^2";
    let run = |args: &[&str]| {
        let o = ivjit(args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    for form in ["gradient", "mean-value"] {
        let doc = run(&[
            "minimize",
            camel,
            "--box",
            "x=[-3,3]",
            "--box",
            "y=[-2,2]",
            "--form",
            form,
            "--backend",
            "cpu",
            "--format",
            "json",
        ]);
        let (lo, hi) = (
            doc["lower"].as_f64().unwrap(),
            doc["upper"].as_f64().unwrap(),
        );
        assert!(
            lo <= -1.0316284534898774 && -1.031628453489877 <= hi,
            "{doc}"
        );
        assert!(hi - lo <= 1e-6 && doc["stopped"] == "converged", "{doc}");
    }
    let doc = run(&[
        "minimize",
        "x^2",
        "--box",
        "x=[1,3]",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert_eq!(
        (doc["lower"].as_f64(), doc["upper"].as_f64()),
        (Some(1.0), Some(1.0))
    );
    for bad in [
        vec!["minimize", "x*y", "--box", "x=[0,1]"],
        vec!["minimize", "x", "--box", "x=[0,inf]"],
        vec!["minimize", "x", "--box", "z=[0,1]"],
        vec!["minimize", "x, x", "--box", "x=[0,1]"],
    ] {
        let o = ivjit(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with("error:"), "{}", stderr(&o));
    }
}

/// `ivjit solve`: the circle and the cubic, both solutions proven unique in boxes narrower
/// than 1e-12 (one in each quadrant the cubic passes); a double zero found but not proven;
/// non-square systems exit 2.
#[test]
fn solve_proves_the_zeros_unique() {
    let o = ivjit(&[
        "solve",
        "x^2 + y^2 - 1, y - x^3",
        "--box",
        "x=[-2,2]",
        "--box",
        "y=[-2,2]",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let zeros = doc["zeros"].as_array().unwrap();
    assert_eq!(zeros.len(), 2, "{doc}");
    assert_eq!(doc["backend"], "cpu", "{doc}");
    assert_eq!(doc["gpu_rounds"], 0, "{doc}");
    assert_eq!(doc["gpu_newton_batches"], 0, "{doc}");
    for (z, sign) in zeros.iter().zip([-1.0, 1.0]) {
        assert_eq!(z["unique"], true);
        for v in ["x", "y"] {
            let (lo, hi) = (
                z["box"][v][0].as_f64().unwrap(),
                z["box"][v][1].as_f64().unwrap(),
            );
            assert!(hi - lo < 1e-12 && lo * sign > 0.5, "{z}");
        }
    }
    let o = ivjit(&["solve", "(x-2)^2", "--box", "x=[0,4]", "--backend", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("not proven") && stdout(&o).contains("0 proven unique"));
    assert!(stdout(&o).contains(" s on the cpu"), "{}", stdout(&o));
    let o = ivjit(&["solve", "x + y", "--box", "x=[0,1]", "--box", "y=[0,1]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("as many equations"), "{}", stderr(&o));
}

#[test]
fn relate_prints_the_comparisons_of_two_intervals() {
    let o = ivjit(&["relate", "[1, 2]_dac", "[2, 3]", "--member", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for line in [
        "A = [1, 2]_dac",
        "isMember(2, A): true",
        "overlap(A, B): meets",
        "precedes(A, B): true",
        "strictPrecedes(A, B): false",
        "subset(A, B): false",
        "less(A, B): true",
    ] {
        assert!(out.lines().any(|l| l == line), "{line} not in\n{out}");
    }
    let o = ivjit(&["relate", "[empty]", "[nai]", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["isEmpty"], true);
    assert_eq!(v["subset"], false, "every comparison with NaI is false");
    assert!(v["overlap"].is_null());
}

#[test]
fn relate_refuses_bounds_that_are_not_doubles() {
    // [0, 0.1] precedes [0.1, 1] as written; rounded outward it would not: an error instead.
    let o = ivjit(&["relate", "[0, 0.1]", "[0.1, 1]"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("'0.1' is not a double") && err.contains("0x1.999999999999ap-4"),
        "{err}"
    );
}

#[test]
fn decorated_literals_in_expressions() {
    // [1, 2]_def: a value that rests on a function only known to be defined.
    let o = ivjit(&[
        "eval",
        "x + [1, 2]_def, x * [nai]",
        "--decorations",
        "--var",
        "x=[0,1]",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines, ["[1, 3]_def", "[nai]"]);
    // Without --decorations a decoration suffix changes nothing; [nai] has no meaning.
    let o = ivjit(&[
        "eval",
        "x + [1, 2]_def",
        "--var",
        "x=[0,1]",
        "--backend",
        "cpu",
    ]);
    assert_eq!(stdout(&o).trim(), "[1, 3]");
    let o = ivjit(&["eval", "x * [nai]", "--var", "x=[0,1]", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--decorations"), "{}", stderr(&o));
    // An unknown suffix is pointed at.
    let o = ivjit(&[
        "eval",
        "x * [1, 2]_fine",
        "--var",
        "x=1",
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("'_fine' is not a decoration") && err.contains("_com"),
        "{err}"
    );
}

#[test]
fn pave_writes_the_three_lists_and_names_a_bad_constraint() {
    let o = ivjit(&[
        "pave",
        "x^2 + y^2 <= 1, y >= x^3",
        "--box",
        "x=[-2,2]",
        "--box",
        "y=[-2,2]",
        "--eps",
        "0.1",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["vars"], serde_json::json!(["x", "y"]));
    for list in ["inner", "boundary", "outer"] {
        let boxes = doc[list].as_array().unwrap();
        assert!(!boxes.is_empty(), "{list}");
        for b in boxes {
            let b = b.as_array().unwrap();
            assert_eq!(b.len(), 2);
            for side in b {
                let lo: f64 = side[0].as_str().unwrap().parse().unwrap();
                let hi: f64 = side[1].as_str().unwrap().parse().unwrap();
                assert!(
                    (-2.0..=2.0).contains(&lo) && lo <= hi && hi <= 2.0,
                    "{side}"
                );
            }
        }
    }
    // Text: counts and volumes.
    let o = ivjit(&["pave", "x^2 <= 1", "--box", "x=[-2,2]", "--backend", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("inner: 1 boxes, volume 2.000000"),
        "{}",
        stdout(&o)
    );
    // An empty list's volume is 0, not -0 (an empty float sum); a fixpoint ratio outside
    // [0, 1) is a usage error naming the flag.
    let o = ivjit(&[
        "pave",
        "x^2 <= -1",
        "--box",
        "x=[-2,2]",
        "--backend",
        "cpu",
        "--ratio",
        "0.1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("inner: 0 boxes, volume 0.000000\n"),
        "{}",
        stdout(&o)
    );
    let o = ivjit(&["pave", "x <= 1", "--box", "x=[0,2]", "--ratio", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--ratio 1"), "{}", stderr(&o));
    // A picture of a 2-D paving: inner black, outer white.
    let dir = tempfile::tempdir().unwrap();
    let png_path = dir.path().join("pave.png");
    let o = ivjit(&[
        "pave",
        "x^2 + y^2 <= 1, y >= x^3",
        "--box",
        "x=[-2,2]",
        "--box",
        "y=[-2,2]",
        "--backend",
        "cpu",
        "--png",
        png_path.to_str().unwrap(),
        "--size",
        "64x64",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (64, 64));
    // Pixel (row 23, column 24) has its center at (-0.46875, 0.53125): in the set.
    assert_eq!(buf[23 * 64 + 24], 0, "inner: black");
    assert_eq!(buf[0], 255, "the corner (-2, 2) is outside: white");
    let o = ivjit(&[
        "pave",
        "x <= 1",
        "--box",
        "x=[0,2]",
        "--png",
        png_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--png draws a paving of 2 variables"),
        "{}",
        stderr(&o)
    );
    // A constraint without a relation: a usage error naming it.
    let o = ivjit(&["pave", "x + y", "--box", "x=[0,1]", "--box", "y=[0,1]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("constraint 1 (`x + y`): expected a relation"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn contract_narrows_a_box_or_proves_it_empty() {
    let args = |x: &'static str, format: &'static str| {
        ivjit(&[
            "contract",
            "x^2 + y^2 == 1",
            "--box",
            x,
            "--box",
            "y=[-2,2]",
            "--backend",
            "cpu",
            "--format",
            format,
        ])
    };
    let o = args("x=[0.6,2]", "json");
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let side = |k: usize, e: usize| -> f64 { doc["box"][k][e].as_str().unwrap().parse().unwrap() };
    // x in [0.6, 1], y in [-0.8, 0.8], outward.
    assert!(side(0, 0) <= 0.6 && side(0, 1) == 1.0, "{doc}");
    assert!(side(1, 0) <= -0.8 && side(1, 0) > -0.8 - 1e-12 && side(1, 1) == -side(1, 0));
    let o = args("x=[1.5,2]", "text");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "empty: no point of the box satisfies the constraints\n"
    );
}

#[test]
fn minimize_subject_to_encloses_the_constrained_minimum() {
    // min x + y on the unit disk: -sqrt(2).
    let o = ivjit(&[
        "minimize",
        "x + y",
        "--subject-to",
        "x^2 + y^2 <= 1",
        "--box",
        "x=[-2,2]",
        "--box",
        "y=[-2,2]",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (lo, hi) = (
        doc["lower"].as_f64().unwrap(),
        doc["upper"].as_f64().unwrap(),
    );
    // SQRT_2 is sqrt 2 rounded to nearest, 1e-16 above it: -SQRT_2 is below -sqrt 2 and the
    // next float up above it, so lo < -SQRT_2 and hi > -SQRT_2 put -sqrt 2 in [lo, hi].
    let r = -std::f64::consts::SQRT_2;
    assert!(lo < r && hi > r && hi - lo <= 1e-6, "{doc}");
    assert_eq!(doc["stopped"], "converged");
    let x = doc["argmin"]["x"].as_f64().unwrap();
    let y = doc["argmin"]["y"].as_f64().unwrap();
    assert!(x < 0.0 && y < 0.0, "{doc}");
    // Text: an equality is relaxed, and the output says so.
    let o = ivjit(&[
        "minimize",
        "x*y",
        "--subject-to",
        "x^2 + y^2 == 2",
        "--box",
        "x=[-3,3]",
        "--box",
        "y=[-3,3]",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("minimum in [-1.0000"), "{text}");
    assert!(
        text.contains("proven feasible") && text.contains("relaxed to |h| <= 1e-6"),
        "{text}"
    );
    // Infeasible.
    let o = ivjit(&[
        "minimize",
        "x",
        "--subject-to",
        "x >= 3",
        "--box",
        "x=[-1,1]",
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("infeasible"), "{}", stdout(&o));
    // A constraint without a relation is named.
    let o = ivjit(&[
        "minimize",
        "x",
        "--subject-to",
        "x >= 0, x + 1",
        "--box",
        "x=[-1,1]",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("constraint 2 (`x + 1`)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn pave_writes_every_box_as_npy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.npy");
    let args = [
        "pave",
        "x^2 + y^2 <= 1, y >= x^3",
        "--box",
        "x=[-2,2]",
        "--box",
        "y=[-2,2]",
        "--eps",
        "0.1",
        "--backend",
        "cpu",
    ];
    let o = ivjit(&[&args[..], &["-o", path.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("variables x, y"), "{}", stderr(&o));
    let bytes = std::fs::read(&path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    let values: Vec<f64> = npy.into_vec().unwrap();
    assert_eq!(shape[1], 5);
    // The same counts as the JSON lists, class by class; every box inside the root.
    let o = ivjit(&[&args[..], &["--format", "json"]].concat());
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for (class, list) in [(1.0, "inner"), (2.0, "boundary"), (0.0, "outer")] {
        let want = doc[list].as_array().unwrap().len();
        let got = values.chunks_exact(5).filter(|r| r[0] == class).count();
        assert_eq!(got, want, "{list}");
    }
    assert_eq!(shape[0] as usize, values.len() / 5);
    for r in values.chunks_exact(5) {
        assert!(
            r[1] <= r[2] && r[3] <= r[4] && r[1] >= -2.0 && r[4] <= 2.0,
            "{r:?}"
        );
    }
}

#[test]
fn solve_takes_constraints_and_minibex_systems() {
    // Four integer zeros, each proven unique; its box holds it (the bounds exact decimals).
    let o = ivjit(&[
        "solve",
        "x^2 + y^2 == 5, x*y == 2, x >= 0",
        "--box",
        "x=[-3,3]",
        "--box",
        "y=[-inf,inf]",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["vars"], serde_json::json!(["x", "y"]));
    let sols = doc["solutions"].as_array().unwrap();
    assert_eq!(sols.len(), 2, "{doc}");
    assert!(doc["undecided"].as_array().unwrap().is_empty(), "{doc}");
    let side = |b: &serde_json::Value, k: usize| -> (f64, f64) {
        let s = &b[k];
        (
            s[0].as_str().unwrap().parse().unwrap(),
            s[1].as_str().unwrap().parse().unwrap(),
        )
    };
    for (b, (x, y)) in sols.iter().zip([(1.0, 2.0), (2.0, 1.0)]) {
        let (sx, sy) = (side(b, 0), side(b, 1));
        assert!(sx.0 <= x && x <= sx.1 && sy.0 <= y && y <= sy.1, "{b}");
    }
    // A Minibex system (IBEX's Kin1) in text: every line a proven solution, then the count.
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/minibex/solver/Kin1.bch"
    );
    let o = ivjit(&["solve", "-f", file, "--backend", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let proven = out
        .lines()
        .filter(|l| l.ends_with("unique solution proven (Krawczyk)"))
        .count();
    assert!(proven > 0, "{out}");
    assert!(
        out.contains(&format!(
            "{proven} solutions proven unique; 0 undecided boxes"
        )),
        "{out}"
    );
    // A file with an objective belongs to minimize.
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/minibex/ex2_1_1.bch"
    );
    let o = ivjit(&["solve", "-f", file]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("use ivjit minimize"), "{}", stderr(&o));
}

#[test]
fn minimize_reads_an_ibex_minibex_problem() {
    // IBEX's ex2_1_1 (COCONUT Library1): a concave quadratic over [0, 1]^5 with one linear
    // constraint; the published minimum -17 at (1, 1, 0, 1, 0).
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/minibex/ex2_1_1.bch"
    );
    let o = ivjit(&[
        "minimize",
        "-f",
        file,
        "--tol",
        "1e-4",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (lo, hi) = (
        doc["lower"].as_f64().unwrap(),
        doc["upper"].as_f64().unwrap(),
    );
    assert!(lo <= -17.0 && -17.0 <= hi && hi - lo <= 1e-4, "{doc}");
    assert_eq!(doc["stopped"], "converged");
    // ex14_1_1: minimum 0; x3's domain [-1e8, 1e8] narrowed by the constraints.
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/minibex/ex14_1_1.bch"
    );
    let o = ivjit(&[
        "minimize",
        "-f",
        file,
        "--tol",
        "1e-4",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (lo, hi) = (
        doc["lower"].as_f64().unwrap(),
        doc["upper"].as_f64().unwrap(),
    );
    assert!(lo <= 0.0 && 0.0 <= hi && hi - lo <= 1e-4, "{doc}");
    // A Minibex error names the file and the line.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.bch");
    std::fs::write(&bad, "variables\n  x[2][2] in [0, 1];\nminimize x;\nend\n").unwrap();
    let o = ivjit(&["minimize", "-f", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.bch: line 2"), "{}", stderr(&o));
}

/// A reader that stops early (`ivjit ptx ... | head`): the process ends quietly on the closed
/// pipe (killed by SIGPIPE, as other Unix tools), without a panic on standard error.
#[cfg(unix)]
#[test]
fn a_closed_output_pipe_ends_the_process_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let tape = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/models/prospero.vm");
    let mut child = Command::new(binary())
        .args(["ptx", "-f", tape.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is dropped here: the rest of the PTX (megabytes) meets a closed pipe.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}
