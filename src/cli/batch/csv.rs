//! CSV batches (see the parent module for the format): a header of `NAME_lo,NAME_hi` column
//! pairs, one box per row; results as `lo,hi` (or `out1_lo,out1_hi,...`) rows.

use super::Batch;
use crate::cli::progress::Progress;
use crate::cli::Failure;
use ivjit::syntax::number::parse_enclosure;
use ivjit::{Interval, Precision};
use std::path::Path;

pub(super) fn read(
    path: &Path,
    vars: &[String],
    given: &[(String, Interval)],
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
    for (i, n) in names.iter().enumerate() {
        let (var, is_lo) = if let Some(v) = n.strip_suffix("_lo") {
            (v, true)
        } else if let Some(v) = n.strip_suffix("_hi") {
            (v, false)
        } else {
            return Err(Failure::input(format!(
                "{file}, header, column {} '{n}': column names must be NAME_lo or NAME_hi",
                i + 1
            )));
        };
        let k = match columns.iter().position(|c| c == var) {
            Some(k) => k,
            None => {
                columns.push(var.to_string());
                lo_col.push(usize::MAX);
                hi_col.push(usize::MAX);
                columns.len() - 1
            }
        };
        let slot = if is_lo {
            &mut lo_col[k]
        } else {
            &mut hi_col[k]
        };
        if *slot != usize::MAX {
            return Err(Failure::input(format!(
                "{file}, header: column '{n}' appears twice"
            )));
        }
        *slot = i;
    }
    for (k, c) in columns.iter().enumerate() {
        if lo_col[k] == usize::MAX || hi_col[k] == usize::MAX {
            let missing = if lo_col[k] == usize::MAX { "lo" } else { "hi" };
            return Err(Failure::input(format!(
                "{file}, header: '{c}' has no {c}_{missing} column"
            )));
        }
        if !vars.iter().any(|v| v == c) {
            return Err(Failure::input(format!(
                "{file}, header: the expression has no variable '{c}' (its variables: {})",
                vars.join(", ")
            )));
        }
        if given.iter().any(|(n, _)| n == c) {
            return Err(Failure::input(format!(
                "'{c}' is given both by --var and by {file}; give it once"
            )));
        }
    }
    let mut rows = Vec::new();
    progress.phase(
        "reading",
        text.bytes().filter(|&b| b == b'\n').count() as u64,
    );
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
        let mut row = Vec::with_capacity(columns.len());
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
                row.push(Interval::EMPTY);
                continue;
            }
            let lo = parse_enclosure(l)
                .map_err(|e| Failure::input(format!("{}: '{l}' is not a number: {e}", at(lc))))?
                .lo;
            let hi = parse_enclosure(h)
                .map_err(|e| Failure::input(format!("{}: '{h}' is not a number: {e}", at(hc))))?
                .hi;
            let iv =
                Interval::new(lo, hi).map_err(|e| Failure::input(format!("{}: {e}", at(lc))))?;
            row.push(iv);
        }
        rows.push(row);
    }
    Ok(Batch { columns, rows })
}

pub(super) fn write(
    path: Option<&Path>,
    results: &[Vec<Interval>],
    columns: &[super::Column],
    precision: Precision,
    progress: &mut Progress,
) -> Result<(), Failure> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let failed = |e: csv::Error| Failure::runtime(format!("cannot write the results: {e}"));
    let header: Vec<String> = columns
        .iter()
        .flat_map(|c| {
            if c.name.is_empty() {
                ["lo".to_string(), "hi".to_string()]
            } else {
                [format!("{}_lo", c.name), format!("{}_hi", c.name)]
            }
        })
        .collect();
    out.write_record(&header).map_err(failed)?;
    let mut cells = Vec::with_capacity(2 * columns.len());
    for (i, row) in results.iter().enumerate() {
        if i % 65536 == 0 {
            progress.set(i as u64);
        }
        cells.clear();
        for c in columns {
            match c.cell(row) {
                None => cells.extend(["undefined".to_string(), "undefined".to_string()]),
                Some(iv) if iv.is_empty() => {
                    cells.extend(["empty".to_string(), "empty".to_string()])
                }
                Some(iv) => {
                    cells.push(Interval::format_lower(iv.lo, precision));
                    cells.push(Interval::format_upper(iv.hi, precision));
                }
            }
        }
        out.write_record(&cells).map_err(failed)?;
    }
    let text = out
        .into_inner()
        .map_err(|e| Failure::runtime(format!("cannot write the results: {e}")))?;
    match path {
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(&text)
                .map_err(|e| Failure::runtime(format!("cannot write to standard output: {e}")))
        }
        Some(p) => super::super::output::write(p, &text),
    }
}
