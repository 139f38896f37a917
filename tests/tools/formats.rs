//! Batch files in NumPy `.npy` format, through the real `ivjit` binary: round trips, mixed CSV and
//! NPY, every malformed file, and no output file (or temporary file) left behind on error. The
//! `.npy` files are written byte by byte here, so the tests need no NumPy.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::binary as support;
use support::ivjit_binary as binary;

/// Runs `ivjit eval EXPR --backend cpu ARGS...`; the progress bar is allowed at once, so that a
/// bar drawn on a non-terminal stderr would show in every test.
fn eval(expr: &str, args: &[&str]) -> Output {
    Command::new(binary())
        .args(["eval", expr, "--backend", "cpu"])
        .args(args)
        .env("IVJIT_PROGRESS_AFTER_MS", "0")
        .output()
        .expect("ivjit runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

/// A `.npy` file (format 1.0) with the given header dictionary and raw data.
fn npy_raw(dict: &str, data: &[u8]) -> Vec<u8> {
    let unpadded = 10 + dict.len() + 1;
    let header = format!("{dict}{}\n", " ".repeat((64 - unpadded % 64) % 64));
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A C-order `<f8` array, as `np.save` writes it.
fn npy_f8(rows: &[&[f64]]) -> Vec<u8> {
    let m = rows.first().map_or(0, |r| r.len());
    let data: Vec<u8> = rows
        .iter()
        .flat_map(|r| r.iter())
        .flat_map(|x| x.to_le_bytes())
        .collect();
    npy_raw(
        &format!(
            "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {m}), }}",
            rows.len()
        ),
        &data,
    )
}

/// Reads an output `.npy`, checking the exact header ivjit writes; returns the rows.
fn read_npy(path: &Path) -> Vec<Vec<f64>> {
    let bytes = std::fs::read(path).expect("output written");
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "magic and version 1.0");
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!(
        (10 + len) % 64,
        0,
        "the data starts at a multiple of 64 bytes"
    );
    let header = std::str::from_utf8(&bytes[10..10 + len]).unwrap();
    assert!(header.ends_with('\n'), "{header:?}");
    let dict = header.trim_end();
    let shape = dict
        .strip_prefix("{'descr': '<f8', 'fortran_order': False, 'shape': (")
        .and_then(|s| s.strip_suffix("), }"))
        .unwrap_or_else(|| panic!("unexpected header {dict:?}"));
    // NumPy writes "(2, 4)", npyz "(2, 4, )": both are the tuple (2, 4).
    let (n, m) = shape.trim_end_matches([',', ' ']).split_once(", ").unwrap();
    let (n, m): (usize, usize) = (n.parse().unwrap(), m.parse().unwrap());
    let data = &bytes[10 + len..];
    assert_eq!(data.len(), 8 * n * m, "data size for shape ({n}, {m})");
    let values: Vec<f64> = data
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    values
        .chunks(m.max(1))
        .take(n)
        .map(<[f64]>::to_vec)
        .collect()
}

/// Parses CSV output into rows of bounds, `empty` as NaN.
fn parse_csv(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|c| {
                    if c == "empty" {
                        f64::NAN
                    } else {
                        c.parse().unwrap()
                    }
                })
                .collect()
        })
        .collect()
}

/// Bounds equal as numbers, NaN equal to NaN (CSV prints -0 as 0).
fn same(a: &[Vec<f64>], b: &[Vec<f64>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(u, v)| u == v || (u.is_nan() && v.is_nan()))
        })
}

fn bits(rows: &[Vec<f64>]) -> Vec<Vec<u64>> {
    rows.iter()
        .map(|r| r.iter().map(|x| x.to_bits()).collect())
        .collect()
}

const NAN: f64 = f64::NAN;

#[test]
fn npy_round_trip_with_empty_boxes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.npy");
    let output = dir.path().join("out.npy");
    std::fs::write(
        &input,
        npy_f8(&[
            &[1.0, 2.0, 0.5, 0.5],
            &[NAN, NAN, 0.0, 1.0],
            &[-1.0, 3.0, -2.0, 0.25],
        ]),
    )
    .unwrap();
    let o = eval("x*y + 1", &["--input", p(&input), "--output", p(&output)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        stderr(&o),
        "",
        "no progress bar when stderr is not a terminal"
    );
    let rows = read_npy(&output);
    let expected = vec![vec![1.5, 2.0], vec![NAN, NAN], vec![-5.0, 3.0]];
    assert_eq!(bits(&rows), bits(&expected));
}

#[test]
fn npy_several_outputs_make_column_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.npy");
    let output = dir.path().join("out.npy");
    std::fs::write(
        &input,
        npy_f8(&[&[1.0, 2.0, 0.5, 0.5], &[-1.0, 1.0, 1.0, 2.0]]),
    )
    .unwrap();
    let o = eval(
        "x*y, x - y, sqrt(x - 5)",
        &["--input", p(&input), "--output", p(&output)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = read_npy(&output);
    let expected = vec![
        vec![0.5, 1.0, 0.5, 1.5, NAN, NAN],
        vec![-2.0, 2.0, -3.0, 0.0, NAN, NAN],
    ];
    assert_eq!(bits(&rows), bits(&expected));
}

#[test]
fn npy_columns_follow_first_appearance_and_skip_var() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.npy");
    // 'y' appears first: columns [y_lo, y_hi, x_lo, x_hi].
    std::fs::write(&input, npy_f8(&[&[10.0, 10.0, 1.0, 2.0]])).unwrap();
    let o = eval("y - x", &["--input", p(&input)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "lo,hi\n8,9\n");
    // With --var y, the file holds only x.
    std::fs::write(&input, npy_f8(&[&[1.0, 2.0]])).unwrap();
    let o = eval("y - x", &["--input", p(&input), "--var", "y=10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "lo,hi\n8,9\n");
}

#[test]
fn npy_float32_input_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.npy");
    let output = dir.path().join("out.npy");
    let data: Vec<u8> = [0.1f32, 0.1f32]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(
        &input,
        npy_raw(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }",
            &data,
        ),
    )
    .unwrap();
    let o = eval("x", &["--input", p(&input), "--output", p(&output)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let exact = 0.1f32 as f64;
    assert_eq!(bits(&read_npy(&output)), bits(&[vec![exact, exact]]));
}

#[test]
fn csv_to_npy_and_npy_to_csv_agree_with_csv_to_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv_in = dir.path().join("boxes.csv");
    let npy_in = dir.path().join("boxes.npy");
    // Exactly representable bounds, so that the CSV and the NPY input are the same boxes.
    let boxes: Vec<[f64; 4]> = (0..200)
        .map(|i| {
            let a = (i as f64 - 100.0) / 8.0;
            let b = (i % 17) as f64 / 4.0 - 2.0;
            [a, a + (i % 5) as f64, b, b + 0.5]
        })
        .collect();
    let mut csv = String::from("x_lo,x_hi,y_lo,y_hi\n");
    for b in &boxes {
        csv.push_str(&format!("{},{},{},{}\n", b[0], b[1], b[2], b[3]));
    }
    csv.push_str("empty,empty,1,2\n");
    std::fs::write(&csv_in, csv).unwrap();
    let mut rows: Vec<&[f64]> = boxes.iter().map(|b| &b[..]).collect();
    rows.push(&[NAN, NAN, 1.0, 2.0]);
    std::fs::write(&npy_in, npy_f8(&rows)).unwrap();
    let expr = "x^3 - 2*x*y + sin(y), exp(x) / (y - 0.5)";

    let o = eval(expr, &["--input", p(&csv_in)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv_csv = parse_csv(&stdout(&o));
    assert_eq!(csv_csv.len(), 201);

    let out = dir.path().join("from_csv.npy");
    let o = eval(expr, &["--input", p(&csv_in), "--output", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv_npy = read_npy(&out);
    assert!(same(&csv_csv, &csv_npy), "CSV→NPY differs from CSV→CSV");

    let out_csv = dir.path().join("from_npy.csv");
    let o = eval(expr, &["--input", p(&npy_in), "--output", p(&out_csv)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let npy_csv = parse_csv(&std::fs::read_to_string(&out_csv).unwrap());
    assert!(same(&csv_csv, &npy_csv), "NPY→CSV differs from CSV→CSV");

    let out = dir.path().join("from_npy.npy");
    let o = eval(expr, &["--input", p(&npy_in), "--output", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        bits(&read_npy(&out)),
        bits(&csv_npy),
        "NPY→NPY differs from CSV→NPY"
    );
}

#[test]
fn extension_is_case_insensitive_and_other_extensions_are_csv() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("BOXES.NPY");
    std::fs::write(&input, npy_f8(&[&[1.0, 2.0]])).unwrap();
    let out = dir.path().join("out.txt");
    let o = eval("x + 1", &["--input", p(&input), "--output", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "lo,hi\n2,3\n");
}

/// Runs a bad `.npy` input with an output path; checks exit status 2, the message, and that the
/// directory holds only the input afterwards (no output, no temporary file).
fn rejects(expr: &str, file: &[u8], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.npy");
    let output = dir.path().join("out.npy");
    std::fs::write(&input, file).unwrap();
    let o = eval(expr, &["--input", p(&input), "--output", p(&output)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        err.contains("boxes.npy"),
        "the message names the file: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "expected {n:?} in {err:?}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["boxes.npy"], "nothing but the input is left behind");
}

fn f8_header(shape: &str) -> String {
    format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}")
}

fn zeros(n: usize) -> Vec<u8> {
    vec![0; 8 * n]
}

#[test]
fn rejects_fortran_order() {
    rejects(
        "x*y",
        &npy_raw(
            "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 4), }",
            &zeros(8),
        ),
        &["Fortran order", "C order"],
    );
}

#[test]
fn rejects_wrong_dtypes() {
    let header = |d: &str| format!("{{'descr': '{d}', 'fortran_order': False, 'shape': (1, 4), }}");
    rejects(
        "x*y",
        &npy_raw(&header(">f8"), &zeros(4)),
        &["'>f8'", "big-endian"],
    );
    rejects(
        "x*y",
        &npy_raw(&header("<i8"), &zeros(4)),
        &["dtype '<i8' is not supported", "'<f8'"],
    );
    rejects("x*y", &npy_raw(&header("<f2"), &zeros(1)), &["dtype '<f2'"]);
}

#[test]
fn rejects_wrong_ndim() {
    rejects(
        "x*y",
        &npy_raw(&f8_header("(4,)"), &zeros(4)),
        &["1 dimension", "(4,)", "expected 2"],
    );
    rejects(
        "x*y",
        &npy_raw(&f8_header("(1, 1, 4)"), &zeros(4)),
        &["3 dimensions", "(1, 1, 4)"],
    );
}

#[test]
fn rejects_wrong_column_count() {
    rejects(
        "x*y",
        &npy_f8(&[&[1.0, 2.0, 3.0]]),
        &["3 columns", "needs 4 columns", "x_lo, x_hi, y_lo, y_hi"],
    );
}

#[test]
fn rejects_truncated_files() {
    // Data shorter than the shape says.
    let mut file = npy_f8(&[&[1.0, 2.0, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0]]);
    file.truncate(file.len() - 3);
    rejects("x*y", &file, &["truncated", "shape (2, 4)"]);
    // Header shorter than its length field says.
    let file = npy_f8(&[&[1.0, 2.0, 3.0, 4.0]]);
    rejects("x*y", &file[..40], &["truncated header"]);
    // Not a .npy file at all.
    rejects("x*y", b"x_lo,x_hi\n1,2\n", &["not a NumPy .npy file"]);
    // A header that is not a dictionary.
    rejects(
        "x*y",
        &npy_raw("{'descr': '<f8', ", &[]),
        &["malformed header"],
    );
    // A header without a shape.
    rejects(
        "x*y",
        &npy_raw("{'descr': '<f8', 'fortran_order': False}", &[]),
        &["missing key 'shape'"],
    );
}

#[test]
fn rejects_invalid_intervals_naming_row_and_column() {
    let inf = f64::INFINITY;
    rejects(
        "x*y",
        &npy_f8(&[&[1.0, 2.0, 0.0, 1.0], &[1.0, 2.0, 3.0, 2.0]]),
        &["row 1, column 2 (y_lo", "greater than upper bound"],
    );
    rejects(
        "x*y",
        &npy_f8(&[&[1.0, NAN, 0.0, 1.0]]),
        &["row 0, column 1 (x_hi", "NaN in both columns"],
    );
    rejects(
        "x*y",
        &npy_f8(&[&[NAN, 2.0, 0.0, 1.0]]),
        &["row 0, column 0 (x_lo", "NaN"],
    );
    rejects(
        "x*y",
        &npy_f8(&[&[1.0, 2.0, inf, inf]]),
        &["row 0, column 2 (y_lo", "+inf"],
    );
    rejects(
        "x*y",
        &npy_f8(&[&[-inf, -inf, 0.0, 1.0]]),
        &["row 0, column 1 (x_hi", "-inf"],
    );
}

#[test]
fn csv_errors_leave_no_npy_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.csv");
    let output = dir.path().join("out.npy");
    std::fs::write(&input, "x_lo,x_hi\n1,2\n3,2\n").unwrap();
    let o = eval("x", &["--input", p(&input), "--output", p(&output)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("row 2"), "{}", stderr(&o));
    assert!(!output.exists());
}

#[test]
fn no_progress_output_without_a_terminal() {
    // Large enough for several phases and chunk updates; the bar is allowed from the first
    // millisecond (IVJIT_PROGRESS_AFTER_MS=0), but stderr is a pipe.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.npy");
    let output = dir.path().join("out.npy");
    let rows: Vec<[f64; 2]> = (0..100_000).map(|i| [i as f64, i as f64 + 1.0]).collect();
    let refs: Vec<&[f64]> = rows.iter().map(|r| &r[..]).collect();
    std::fs::write(&input, npy_f8(&refs)).unwrap();
    let o = eval("x^2 - x", &["--input", p(&input), "--output", p(&output)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "nothing on a non-terminal stderr");
    assert_eq!(read_npy(&output).len(), 100_000);
}

#[test]
fn batches_carry_decorations_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    // Bare boxes: decorated from their bounds; sqrt is undefined on [-1, 0), floor jumps.
    let bare = dir.path().join("bare.csv");
    std::fs::write(
        &bare,
        "x_lo,x_hi,y_lo,y_hi\n1,4,1,2\n-1,4,1,2\nempty,empty,1,1\n",
    )
    .unwrap();
    let o = eval(
        "sqrt(x) + 1/y, floor(x)",
        &["--decorations", "--input", p(&bare)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "out1_lo,out1_hi,out1_dec,out2_lo,out2_hi,out2_dec\n\
         1.5,3,com,1,4,def\n\
         0.5,3,trv,-1,4,def\n\
         empty,empty,trv,empty,empty,trv\n"
    );
    // A NAME_dec column (names or codes): the decoration of the input; ill gives NaI.
    let given = dir.path().join("given.csv");
    std::fs::write(
        &given,
        "x_lo,x_hi,x_dec,y_lo,y_hi\n1,4,def,1,2\n1,4,16,1,2\n1,4,ill,1,2\n",
    )
    .unwrap();
    let o = eval("sqrt(x) + 1/y", &["--decorations", "--input", p(&given)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "lo,hi,dec\n1.5,3,def\n1.5,3,com\nempty,empty,ill\n"
    );
    // .npy: the decoration's code in one column after each output's pair.
    let out = dir.path().join("out.npy");
    let o = eval(
        "sqrt(x) + 1/y",
        &["--decorations", "--input", p(&bare), "--output", p(&out)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = read_npy(&out);
    assert_eq!(
        bits(&rows),
        bits(&[
            vec![1.5, 3.0, 16.0],
            vec![0.5, 3.0, 4.0],
            vec![NAN, NAN, 4.0]
        ])
    );
    // Without --decorations a NAME_dec column is an error that says what to add; a
    // decoration the box cannot carry, or a word that is none, is an error naming the cell.
    let o = eval("sqrt(x) + 1/y", &["--input", p(&given)]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("needs --decorations"), "{}", stderr(&o));
    let bad = dir.path().join("bad.csv");
    for (cell, says) in [
        ("com", "cannot be decorated com"),
        ("xyz", "is not a decoration"),
    ] {
        std::fs::write(&bad, format!("x_lo,x_hi,x_dec\n1,inf,{cell}\n")).unwrap();
        let o = eval("x", &["--decorations", "--input", p(&bad)]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(stderr(&o).contains("row 1"), "{}", stderr(&o));
    }
}

/// A `.npy` batch with a decoration column per variable (the codes a decorated `.npy` output
/// holds): the decorations are the inputs', a NaI box (NaN, NaN, 0) gives NaI, and a code
/// that is none, a decoration the box cannot carry, or three columns without --decorations
/// are errors that name the cell or say what to add.
#[test]
fn npy_batches_take_decoration_columns() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npy");
    std::fs::write(
        &input,
        npy_f8(&[
            &[1.0, 4.0, 8.0, 1.0, 2.0, 16.0],
            &[1.0, 4.0, 16.0, 1.0, 2.0, 12.0],
            &[NAN, NAN, 0.0, 1.0, 2.0, 16.0],
        ]),
    )
    .unwrap();
    let out = dir.path().join("out.npy");
    let o = eval(
        "sqrt(x) + 1/y",
        &["--decorations", "--input", p(&input), "--output", p(&out)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        bits(&read_npy(&out)),
        bits(&[
            vec![1.5, 3.0, 8.0],
            vec![1.5, 3.0, 12.0],
            vec![NAN, NAN, 0.0]
        ])
    );
    let o = eval("sqrt(x) + 1/y", &["--input", p(&input)]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("add --decorations"), "{}", stderr(&o));
    for (row, says) in [
        (&[1.0, f64::INFINITY, 16.0][..], "cannot be decorated com"),
        (&[1.0, 2.0, 5.0][..], "not a decoration's code"),
    ] {
        std::fs::write(&input, npy_f8(&[row])).unwrap();
        let o = eval("x", &["--decorations", "--input", p(&input)]);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(err.contains(says) && err.contains("arr[0, 2]"), "{err}");
    }
}
