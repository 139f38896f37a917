//! `ivjit relate A [B]`: IEEE 1788's comparisons of intervals (the library's `Interval::subset`,
//! `DecoratedInterval::overlap`, ...), printed as text or JSON. The comparisons are exact, so
//! every bound must be a double: a decimal that is not one (`0.1`) is an error, not silently
//! rounded (rounding outward could turn `precedes` false).

use super::Failure;
use ivjit::DecoratedInterval;

/// The options of `ivjit relate`.
#[derive(clap::Args)]
pub struct RelateArgs {
    /// The first interval: `[lo, hi]`, a number, `[empty]`, `[entire]`, optionally decorated
    /// (`[1, 2]_dac`), or `[nai]`. Bounds must be doubles (hex-floats, or decimals that are
    /// exactly doubles, like 0.5).
    a: String,
    /// The second interval, for the relations between two.
    b: Option<String>,
    /// Also say whether this number (a double) is a member of A.
    #[arg(long, allow_hyphen_values = true)]
    member: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// A double written as text (`--member`), or an error that says why it is not one.
fn exact_number(text: &str) -> Result<f64, Failure> {
    let d = DecoratedInterval::parse_exact(text)
        .map_err(|e| Failure::input(format!("--member: {e}")))?;
    if !d.interval.is_singleton() || text.trim().starts_with('[') {
        return Err(Failure::input(format!(
            "--member '{}' is not a number",
            text.trim()
        )));
    }
    Ok(d.interval.lo)
}

/// An interval argument, every bound a double.
fn interval(text: &str, name: &str) -> Result<DecoratedInterval, Failure> {
    DecoratedInterval::parse_exact(text).map_err(|e| Failure::input(format!("{name}: {e}")))
}

/// `ivjit relate`.
pub fn relate(args: RelateArgs) -> Result<(), Failure> {
    let a = interval(&args.a, "A")?;
    let b = args.b.as_deref().map(|t| interval(t, "B")).transpose()?;
    let member = args.member.as_deref().map(exact_number).transpose()?;
    // (the standard's name, its arguments as text prints them, the value)
    let mut rows: Vec<(&str, String, serde_json::Value)> = Vec::new();
    for (name, f) in ivjit::relation::PREDICATES {
        rows.push((name, "A".into(), f(&a).into()));
    }
    if let (Some(x), Some(text)) = (member, &args.member) {
        rows.push((
            "isMember",
            format!("{}, A", text.trim()),
            a.is_member(x).into(),
        ));
    }
    if let Some(b) = &b {
        // NaI has no overlap state (the standard leaves it undefined): null in JSON.
        let overlap = a
            .overlap(b)
            .map_or(serde_json::Value::Null, |o| o.name().into());
        rows.push(("overlap", "A, B".into(), overlap));
        for (name, f) in ivjit::relation::RELATIONS {
            rows.push((name, "A, B".into(), f(&a, b).into()));
        }
    }
    let shown = |d: &DecoratedInterval| d.display(ivjit::Precision::F64);
    if args.json {
        let mut obj = serde_json::Map::new();
        obj.insert("A".into(), shown(&a).into());
        if let Some(b) = &b {
            obj.insert("B".into(), shown(b).into());
        }
        if let Some(text) = &args.member {
            obj.insert("member".into(), text.trim().into());
        }
        for (name, _, v) in rows {
            obj.insert(name.into(), v);
        }
        println!("{}", serde_json::Value::Object(obj));
    } else {
        println!("A = {}", shown(&a));
        if let Some(b) = &b {
            println!("B = {}", shown(b));
        }
        for (name, on, v) in rows {
            let v = match v {
                serde_json::Value::Null => "undefined (NaI)".to_string(),
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            println!("{name}({on}): {v}");
        }
    }
    Ok(())
}
