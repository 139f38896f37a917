//! The embedded evaluator used from another Rust program: bound a function over a grid of boxes.
//! Run with `cargo run --example embed`.
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let expr = Expression::parse("x^4 - 5*x^2 + y^4 - 5*y^2 + 11.8")?;
    let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Auto)?;
    // Eight boxes along the diagonal of [-3, 3]^2.
    let boxes: Vec<Vec<Interval>> = (0..8)
        .map(|k| {
            let a = -3.0 + 0.75 * k as f64;
            let side = Interval::new(a, a + 0.75).unwrap();
            vec![side, side]
        })
        .collect();
    for (b, out) in boxes.iter().zip(eval.eval_many(&boxes)?) {
        let sign = if out[0].lo > 0.0 {
            "no root"
        } else {
            "may hold a root"
        };
        println!("{} x {} -> {}  ({sign})", b[0], b[1], out[0]);
    }
    println!("backend: {}", eval.backend().name());
    Ok(())
}
