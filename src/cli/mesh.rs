//! `ivjit mesh`: a closed triangle mesh of f = 0 over a box of space
//! ([`ivjit::search::mesh`]), written as STL, PLY or OBJ.

use std::path::PathBuf;
use std::time::Instant;

use super::{compile, failure, precision, report_fallback, Failure};
use crate::{BackendArg, PrecisionArg, Source};
use ivjit::search::mesh::{mesh, mesh_with_normals, write, MeshOptions};
use ivjit::{BackendChoice, Evaluator};

#[derive(clap::Args)]
pub struct MeshArgs {
    #[command(flatten)]
    pub source: Source,
    /// The lattice: 2^depth cells a side (1 to 11).
    #[arg(long, default_value_t = 7)]
    pub depth: u32,
    /// The region x0,x1,y0,y1,z0,z1. Its faces count as outside: the mesh is closed there.
    #[arg(long, default_value = "-1,1,-1,1,-1,1", allow_hyphen_values = true)]
    pub region: String,
    /// The output: .stl (binary), .ply (binary) or .obj.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// How deep the search for parts thinner than a cell subdivides an edge, a face or a cell
    /// whose samples agree (0: none, the point-sampled mesh of the same lattice).
    #[arg(long, default_value_t = MeshOptions::default().witness_levels)]
    pub witness_levels: u32,
    /// Bisection steps placing each vertex between its two samples.
    #[arg(long, default_value_t = MeshOptions::default().bisections)]
    pub bisections: u32,
    /// Normals at the vertices from f's gradient (written to .ply and .obj), and the count of
    /// normals not certain and of boundary cells whose topology is certain (f monotone along
    /// an axis there).
    #[arg(long)]
    pub normals: bool,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    #[arg(long, value_enum, default_value = "f64")]
    pub precision: PrecisionArg,
}

/// `x0,x1,y0,y1,z0,z1`.
fn parse_region(s: &str) -> Result<[f64; 6], Failure> {
    let bad = |why: String| {
        Failure::input(format!(
            "--region {s}: {why}; expected x0,x1,y0,y1,z0,z1, e.g. --region=-2,2,-2,2,-1,1"
        ))
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 6 {
        return Err(bad(format!("{} numbers", parts.len())));
    }
    let mut out = [0.0; 6];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = p
            .parse()
            .map_err(|_| bad(format!("'{p}' is not a number")))?;
    }
    Ok(out)
}

pub fn mesh_command(args: MeshArgs) -> Result<(), Failure> {
    let region = parse_region(&args.region)?;
    if write::MeshFormat::of(&args.output).is_none() {
        return Err(Failure::input(format!(
            "{}: expected a name ending in .stl, .ply or .obj",
            args.output.display()
        )));
    }
    let inputs: Vec<&std::path::Path> = args.source.file.iter().map(|p| p.as_path()).collect();
    super::output::check_not_an_input(&args.output, &inputs)?;
    let (text, expr) = compile(&args.source)?;
    let choice = BackendChoice::from(args.backend);
    let eval =
        Evaluator::new(&expr, precision(args.precision), choice).map_err(|e| failure(e, &text))?;
    report_fallback(&eval);
    let opts = MeshOptions {
        depth: args.depth,
        region,
        witness_levels: args.witness_levels,
        bisections: args.bisections,
    };
    let start = Instant::now();
    let m = if args.normals {
        let (g, _) = expr.gradient().map_err(|e| failure(e, &text))?;
        let grad =
            Evaluator::new(&g, precision(args.precision), choice).map_err(|e| failure(e, &text))?;
        mesh_with_normals(&eval, &grad, &opts)
    } else {
        mesh(&eval, &opts)
    }
    .map_err(|e| failure(e, &text))?;
    let seconds = start.elapsed().as_secs_f64();
    write::write_file(&m, &args.output)
        .map_err(|e| Failure::input(format!("writing {}: {e}", args.output.display())))?;
    let s = &m.stats;
    println!(
        "{} triangles, {} vertices in {:.1} ms on the {} ({}), {} cells a side",
        m.triangles.len(),
        m.vertices.len(),
        seconds * 1e3,
        eval.backend().name(),
        eval.precision().name(),
        1u64 << args.depth
    );
    println!(
        "cells: {} proven outside, {} proven inside, {} boundary; witnesses of parts thinner \
         than a cell: {} in cells, {} on faces, {} on edges; {} elements uncertain (the surface \
         may pass there unseen at this depth); {} samples unproven; {} evaluations",
        s.outside_cells,
        s.inside_cells,
        s.boundary_cells,
        s.cell_witnesses,
        s.face_witnesses,
        s.edge_witnesses,
        s.uncertain,
        s.unproven_samples,
        s.evaluations
    );
    if args.normals {
        println!(
            "normals: {} of {} not certain; {} of {} boundary cells of certain topology (f \
             monotone along an axis)",
            s.uncertain_normals,
            m.vertices.len(),
            s.certain_cells,
            s.boundary_cells
        );
    }
    Ok(())
}
