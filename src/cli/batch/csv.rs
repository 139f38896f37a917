//! CSV batches (see the parent module for the format): a header of `NAME_lo,NAME_hi` column
//! pairs, one box per row; results as `lo,hi` (or `out1_lo,out1_hi,...`) rows.

use super::Batch;
use crate::cli::progress::Progress;
use crate::cli::Failure;
use ivjit::internals::syntax::number::parse_enclosure;
use ivjit::{Interval, Precision};
use std::path::Path;

pub(super) fn read(
    path: &Path,
    vars: &[String],
    given: &[(String, Interval)],
    decorations: bool,
    progress: &mut Progress,
) -> Result<Batch, Failure> {
    let text = crate::cli::read_text(path, "input file")?;
    let file = path.display();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    // Lines holding only spaces are skipped like empty ones (the reader skips those itself).
    let mut records = reader.records().filter(|r| {
        r.as_ref()
            .map_or(true, |r| !(r.len() == 1 && r[0].is_empty()))
    });
    let unreadable = |e: csv::Error| {
        let line = e
            .position()
            .map_or(String::new(), |p| format!(", line {}", p.line()));
        Failure::input(format!("{file}{line}: {e}"))
    };
    let Some(header) = records.next().transpose().map_err(unreadable)? else {
        return Err(Failure::input(format!(
            "{file} is empty: expected a header such as x_lo,x_hi"
        )));
    };
    let names: Vec<&str> = header.iter().collect();
    // Pair up NAME_lo / NAME_hi columns.
    let mut columns: Vec<String> = Vec::new();
    let mut lo_col: Vec<usize> = Vec::new();
    let mut hi_col: Vec<usize> = Vec::new();
    let mut dec_col: Vec<usize> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, n) in names.iter().enumerate() {
        let (var, which) = if let Some(v) = n.strip_suffix("_lo") {
            (v, 0)
        } else if let Some(v) = n.strip_suffix("_hi") {
            (v, 1)
        } else if let Some(v) = n.strip_suffix("_dec").filter(|_| decorations) {
            (v, 2)
        } else {
            let also = if n.ends_with("_dec") {
                " (a NAME_dec column needs --decorations)"
            } else {
                ""
            };
            return Err(Failure::input(format!(
                "{file}, header, column {} '{n}': column names must be NAME_lo or NAME_hi{also}",
                i + 1
            )));
        };
        let k = *index.entry(var).or_insert_with(|| {
            columns.push(var.to_string());
            lo_col.push(usize::MAX);
            hi_col.push(usize::MAX);
            dec_col.push(usize::MAX);
            columns.len() - 1
        });
        let slot = match which {
            0 => &mut lo_col[k],
            1 => &mut hi_col[k],
            _ => &mut dec_col[k],
        };
        if *slot != usize::MAX {
            return Err(Failure::input(format!(
                "{file}, header: column '{n}' appears twice"
            )));
        }
        *slot = i;
    }
    let expression_vars: std::collections::HashSet<&str> =
        vars.iter().map(String::as_str).collect();
    let given_names: std::collections::HashSet<&str> =
        given.iter().map(|(n, _)| n.as_str()).collect();
    for (k, c) in columns.iter().enumerate() {
        let c = &crate::cli::quote(c);
        if lo_col[k] == usize::MAX || hi_col[k] == usize::MAX {
            let missing = if lo_col[k] == usize::MAX { "lo" } else { "hi" };
            return Err(Failure::input(format!(
                "{file}, header: '{c}' has no {c}_{missing} column"
            )));
        }
        if !expression_vars.contains(columns[k].as_str()) {
            return Err(Failure::input(format!(
                "{file}, header: the expression has no variable '{c}' (its variables: {})",
                crate::cli::list(vars)
            )));
        }
        if given_names.contains(columns[k].as_str()) {
            return Err(Failure::input(format!(
                "'{c}' is given both by --var and by {file}; give it once"
            )));
        }
    }
    let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let mut bounds: Vec<Vec<f64>> = Vec::with_capacity(2 * columns.len());
    for _ in 0..2 * columns.len() {
        bounds.push(super::room_for(lines, "the batch's inputs")?);
    }
    let mut codes: Vec<Option<Vec<f64>>> = Vec::with_capacity(columns.len());
    for &c in &dec_col {
        codes.push(if c == usize::MAX {
            None
        } else {
            Some(super::room_for(lines, "the batch's decorations")?)
        });
    }
    progress.phase("reading", lines as u64);
    let mut n = 0;
    for (row_no, record) in records.enumerate() {
        let cells = record.map_err(unreadable)?;
        let line_no = cells.position().map_or(0, |p| p.line() as usize - 1);
        if row_no % 65536 == 0 {
            progress.set(line_no as u64);
        }
        let at = |col: usize| {
            format!(
                "{file}, row {} (line {}), column {}",
                row_no + 1,
                line_no + 1,
                names.get(col).copied().unwrap_or("?")
            )
        };
        if cells.len() != names.len() {
            return Err(Failure::input(format!(
                "{file}, row {} (line {}): {} cells, but the header has {} columns",
                row_no + 1,
                line_no + 1,
                cells.len(),
                names.len()
            )));
        }
        for k in 0..columns.len() {
            let (lc, hc) = (lo_col[k], hi_col[k]);
            let (l, h) = (&cells[lc], &cells[hc]);
            let empty = |s: &str| s.eq_ignore_ascii_case("empty");
            if empty(l) || empty(h) {
                if !(empty(l) && empty(h)) {
                    let col = if empty(l) { hc } else { lc };
                    return Err(Failure::input(format!(
                        "{}: 'empty' must be in both cells of the pair",
                        at(col)
                    )));
                }
                bounds[2 * k].push(f64::NAN);
                bounds[2 * k + 1].push(f64::NAN);
                continue;
            }
            let number = |text: &str, col: usize| {
                parse_enclosure(text).map_err(|e| {
                    Failure::input(format!(
                        "{}: '{}' is not a number: {e}",
                        at(col),
                        crate::cli::quote(text)
                    ))
                })
            };
            number(l, lc)?;
            number(h, hc)?;
            // The written bounds, compared exactly (`[0.10000000000000001, 0.1]` is inverted).
            let iv = Interval::from_bound_texts(l, h).map_err(|e| {
                // The cell at fault: the upper bound when it is -inf, else the lower one.
                let col = match e {
                    ivjit::IntervalError::HiIsMinusInf => hc,
                    _ => lc,
                };
                Failure::input(format!("{}: {e}", at(col)))
            })?;
            bounds[2 * k].push(iv.lo);
            bounds[2 * k + 1].push(iv.hi);
        }
        for (k, list) in codes.iter_mut().enumerate() {
            let Some(list) = list else { continue };
            let text = &cells[dec_col[k]];
            let d = ivjit::Decoration::from_name(text)
                .or_else(|| {
                    text.parse::<u8>()
                        .ok()
                        .and_then(ivjit::Decoration::from_code)
                })
                .ok_or_else(|| {
                    Failure::input(format!(
                        "{}: '{}' is not a decoration: write com, dac, def, trv or ill (or its \
                         code 16, 12, 8, 4, 0)",
                        at(dec_col[k]),
                        crate::cli::quote(text)
                    ))
                })?;
            let (lo, hi) = (bounds[2 * k][n], bounds[2 * k + 1][n]);
            ivjit::DecoratedInterval::new(Interval { lo, hi }, d)
                .map_err(|e| Failure::input(format!("{}: {e}", at(dec_col[k]))))?;
            list.push(f64::from(d.code()));
        }
        n += 1;
    }
    Ok(Batch {
        columns,
        bounds,
        decorations: codes,
        n,
    })
}

pub(super) fn write(
    path: Option<&Path>,
    results: &[f64],
    n: usize,
    columns: &[super::Column],
    precision: Precision,
    progress: &mut Progress,
) -> Result<(), Failure> {
    use std::io::Write;
    // Numbers, `empty` and `undefined` need no quoting; the names are identifiers.
    let mut text: Vec<u8> = super::room_for(
        64 + n.saturating_mul(columns.len()).saturating_mul(48),
        "the CSV text",
    )?;
    let header: Vec<String> = columns
        .iter()
        .flat_map(|c| {
            if c.decoration {
                vec![c.name.clone()]
            } else if c.name.is_empty() {
                vec!["lo".to_string(), "hi".to_string()]
            } else {
                vec![format!("{}_lo", c.name), format!("{}_hi", c.name)]
            }
        })
        .collect();
    let failed = |e: std::io::Error| Failure::runtime(format!("cannot write the results: {e}"));
    writeln!(text, "{}", header.join(",")).map_err(failed)?;
    for i in 0..n {
        if i % 65536 == 0 {
            progress.set(i as u64);
        }
        for (k, c) in columns.iter().enumerate() {
            if k > 0 {
                text.push(b',');
            }
            if c.decoration {
                text.extend_from_slice(c.decoration_of(results, n, i).name().as_bytes());
                continue;
            }
            match c.cell(results, n, i) {
                None => text.extend_from_slice(b"undefined,undefined"),
                Some(iv) if iv.is_empty() => text.extend_from_slice(b"empty,empty"),
                Some(iv) => {
                    text.extend_from_slice(Interval::format_lower(iv.lo, precision).as_bytes());
                    text.push(b',');
                    text.extend_from_slice(Interval::format_upper(iv.hi, precision).as_bytes());
                }
            }
        }
        text.push(b'\n');
    }
    match path {
        None => super::super::output::write(Path::new("-"), &text),
        Some(p) => super::super::output::write(p, &text),
    }
}
