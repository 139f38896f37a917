//! Name resolution at scale (issue 30): bindings, tape clauses and variables are looked up by
//! hash, so inputs with hundreds of thousands of them compile in linear time. Each case once
//! took tens of seconds (every binding's duplicate check scanned the earlier ones, every
//! variable's number was found by a scan of the variables); the bounds here are generous for
//! debug builds on a loaded machine and far below what a quadratic pass takes.

use std::time::{Duration, Instant};

use ivjit::{BackendChoice, Error, Evaluator, Expression, Interval, Precision};

const N: usize = 200_000;
const LIMIT: Duration = Duration::from_secs(20);

#[track_caller]
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    let elapsed = t.elapsed();
    assert!(elapsed < LIMIT, "{what}: {elapsed:?}");
    out
}

fn point(x: f64) -> Interval {
    Interval::point(x).unwrap()
}

fn eval(expr: &Expression, b: &[Interval]) -> Vec<Interval> {
    Evaluator::new(expr, Precision::F64, BackendChoice::Cpu)
        .unwrap()
        .eval(b)
        .unwrap()
}

fn compile_error(r: Result<Expression, Error>) -> String {
    match r {
        Err(Error::Compile(d)) => d.message,
        Err(e) => panic!("not a compile error: {e}"),
        Ok(_) => panic!("compiled"),
    }
}

#[test]
fn hundreds_of_thousands_of_let_bindings() {
    let lets: String = (0..N).map(|i| format!("let a{i} = x + {i};")).collect();
    let expr = timed("bindings", || {
        Expression::parse(&format!("{lets} a{}", N - 1)).unwrap()
    });
    assert_eq!(eval(&expr, &[point(1.0)]), [point(N as f64)]);
    // The duplicate is still found, after all the others.
    let twice = compile_error(timed("a duplicate binding", || {
        Expression::parse(&format!("{lets} let a7 = x; a7"))
    }));
    assert_eq!(twice, "'a7' is already defined by an earlier let");
}

#[test]
fn hundreds_of_thousands_of_tape_clauses() {
    let mut tape = String::from("_0 var-x\n");
    for i in 1..N {
        tape.push_str(&format!("_{i} add _{} _0\n", i - 1));
    }
    let expr = timed("tape", || Expression::parse_tape(&tape).unwrap());
    assert_eq!(expr.vars(), ["x"]);
    assert_eq!(eval(&expr, &[point(1.0)]), [point(N as f64)]);
    let twice = compile_error(timed("a clause defined twice", || {
        Expression::parse_tape(&format!("{tape}_7 neg _0\n"))
    }));
    assert_eq!(twice, "clause '_7' is defined twice");
}

/// A sum of 2*10^5 distinct variables: numbered in order of appearance, each found by name,
/// and a batch of three boxes evaluated through the library's batch path.
#[test]
fn hundreds_of_thousands_of_variables() {
    let text: String = (0..N)
        .map(|i| format!("v{i}"))
        .collect::<Vec<_>>()
        .join(" + ");
    let expr = timed("variables", || Expression::parse(&text).unwrap());
    assert_eq!(expr.vars().len(), N);
    timed("lookups by name", || {
        for i in 0..N {
            assert_eq!(expr.var_index(&format!("v{i}")), Some(i));
        }
        assert_eq!(expr.var_index("v"), None);
        assert!(expr.var_span(&format!("v{}", N - 1)).is_some());
    });
    let rows: Vec<Vec<Interval>> = (0..3).map(|r| vec![point(r as f64); N]).collect();
    let out = timed("a batch of three boxes", || {
        Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu)
            .unwrap()
            .eval_many(&rows)
            .unwrap()
    });
    for (r, row) in out.iter().enumerate() {
        assert_eq!(row, &[point((r * N) as f64)], "box {r}");
    }
    // The scalar IR's text form reads the inputs back by name.
    let program = timed("scalar text", || {
        let p = expr.scalar(Precision::F64).unwrap();
        ivjit::internals::scalar::text::parse(&p.to_string()).unwrap()
    });
    assert_eq!(program.var_names.len(), N);
}
