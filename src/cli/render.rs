//! `ivjit render`: every pixel of an image over a region of the plane classified by subdivision
//! ([`ivjit::search::render`]) as outside (f > 0), inside (f < 0) or boundary (neither proven),
//! written as a `.npy` uint8 array (0, 1, 2) or a `.png` picture.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{compile, failure, precision, report_fallback, Failure};
use crate::{BackendArg, PrecisionArg, Source};
use ivjit::search::PrunedRender;
use ivjit::search::{self, ray, RenderOptions, BOUNDARY, INSIDE};
use ivjit::{Backend, BackendChoice, Evaluator, Expression};

#[derive(clap::Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub source: Source,
    /// Image size in pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "1024x1024")]
    pub size: String,
    /// The region x0,x1,y0,y1 (row 0 of the image is at y1).
    #[arg(long, default_value = "-1,1,-1,1", allow_hyphen_values = true)]
    pub region: String,
    /// Tile sizes of the subdivision, coarse to fine, ending with 1 [default: 64,8,1; a 2-D
    /// pruned render takes a coarser first level for larger images: on the CPU 128,16,1 from
    /// 1024 pixels a side, on the GPU beyond 1024: 128,16,1 up to 2048, 256,32,4,1 up to
    /// 4096, 512,64,8,1 beyond]
    #[arg(long, value_delimiter = ',')]
    pub tiles: Option<Vec<u32>>,
    /// .npy: the classes as a uint8 array (height, width), 0 outside, 1 inside, 2 boundary;
    /// .png: a picture (inside black, boundary grey, outside white).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    #[arg(long, value_enum, default_value = "f64")]
    pub precision: PrecisionArg,
    /// Print the time and the boxes of each round on stderr.
    #[arg(long)]
    pub stats: bool,
    /// Render this many times (after one untimed warm-up render that compiles and loads
    /// the kernels) and print the fastest and the median time (implies --stats). A pruned 2-D
    /// render's timed frame ends with its image in host memory where it arrived (on the GPU,
    /// page-locked memory the renderer keeps), not copied into a new buffer. A depth map's
    /// ray search (not the pruned one) is repeated N times after the first.
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// 3-D (the expression uses z): the heights searched, z0,z1; each pixel's vertical line
    /// is searched from z1 down. The output is a depth map (.npy float64, NaN for a miss)
    /// or a picture of it shaded by its slopes (.png).
    #[arg(long, default_value = "-1,1", allow_hyphen_values = true)]
    pub zrange: String,
    /// 3-D: the resolution along each line, 1/steps of the z range.
    #[arg(long, default_value_t = 1024)]
    pub steps: usize,
    /// Prune the expression per tile (min/max whose sides do not overlap on the tile
    /// take one side) and evaluate each tile's children with its shorter program: 2-D, the
    /// same classes; 3-D, blocks of rays of the --tiles sizes (1 left out), each block's
    /// rays searched with its program, the same depth map. 2-D: per-tile pruned tapes
    /// run by an interpreter on the backend, no JIT compilation (every operation and
    /// function; with point functions such as sin, a pixel's class may differ from the plain
    /// render's only where one of them is uncertain). --stats prints the mean program length
    /// per round. 2-D renders prune by default where the expression has a min or max and
    /// the pruned render runs on the backend the full one would use (on the GPU: tapes of
    /// +, -, *, sqr, sqrt, abs, min, max of 48 instructions or more); 3-D ones where the
    /// plain search runs on the CPU and the expression has a min or max.
    #[arg(long, conflicts_with = "no_prune")]
    pub prune: bool,
    /// Evaluate every tile with the whole program (no pruning), as before pruning was the
    /// default.
    #[arg(long)]
    pub no_prune: bool,
    /// 3-D, the default: the depth map by voxels: the WIDTH x HEIGHT x STEPS voxels of the
    /// region and z range classified through cubic tiles (--tiles, default 64,16,4,1) with
    /// pruned tapes on the backend (on the GPU the whole search on the device); a pixel's
    /// height is the top of its column's highest voxel not proven outside, which bounds the
    /// surface over the whole pixel, not only its center line.
    #[arg(long, conflicts_with_all = ["prune", "no_prune", "rays"])]
    pub voxels: bool,
    /// 3-D by voxels: certified normals from f's gradient enclosed on each pixel's top voxel
    /// (on the backend; in the frame, by forward differentiation of the pruned tapes, where
    /// no function run by its lowering such as sin is used, else by f's gradient program): .npy gets shape (height, width, 4), the height then the unit normal
    /// (NaN where the enclosure holds 0: uncertain, or nothing is below the pixel); .png is
    /// shaded by the normals, uncertain pixels by the map's slopes in red.
    #[arg(long, conflicts_with = "rays")]
    pub normals: bool,
    /// 3-D: the depth map by the ray search instead of voxels: each pixel's center line
    /// searched from z1 down to 1/STEPS of the z range (--prune and --no-prune choose how,
    /// and imply --rays).
    #[arg(long)]
    pub rays: bool,
}

/// `WIDTHxHEIGHT`.
pub(super) fn parse_size(s: &str) -> Result<(u32, u32), Failure> {
    let bad = || {
        Failure::input(format!(
            "--size {s}: expected WIDTHxHEIGHT in pixels, e.g. --size 1024x768"
        ))
    };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    ))
}

/// `x0,x1,y0,y1`.
fn parse_region(s: &str) -> Result<[f64; 4], Failure> {
    let bad = |why: String| {
        Failure::input(format!(
            "--region {s}: {why}; expected x0,x1,y0,y1, e.g. --region=-2,2,-1.5,1.5"
        ))
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [a, b, c, d] = parts[..] else {
        return Err(bad(format!("{} numbers", parts.len())));
    };
    let mut out = [0.0; 4];
    for (o, p) in out.iter_mut().zip([a, b, c, d]) {
        *o = p
            .parse()
            .map_err(|_| bad(format!("'{p}' is not a number")))?;
    }
    Ok(out)
}

pub fn render(args: RenderArgs) -> Result<(), Failure> {
    let (width, height) = parse_size(&args.size)?;
    let region = parse_region(&args.region)?;
    let format = Format::of(&args.output)?;
    let inputs: Vec<&std::path::Path> = args.source.file.iter().map(|p| p.as_path()).collect();
    super::output::check_not_an_input(&args.output, &inputs)?;
    let (text, expr) = compile(&args.source)?;
    if expr.vars().iter().any(|v| v == "z") {
        if args.normals && (args.prune || args.no_prune) {
            return Err(Failure::input(
                "--normals come with the depth map by voxels; leave out --prune and --no-prune \
                 (they choose how rays are searched)",
            ));
        }
        if !(args.rays || args.prune || args.no_prune) {
            return render_voxels(&args, &text, &expr, (width, height), region, format);
        }
        return render_depth(&args, &text, &expr, (width, height), region, format);
    }
    let p = precision(args.precision);
    let gpu = match args.backend {
        BackendArg::Gpu => true,
        BackendArg::Cpu => false,
        BackendArg::Auto => ivjit::detect_gpu().is_ok(),
    };
    let pruned = if args.prune {
        let backend = if gpu { Backend::Gpu } else { Backend::Cpu };
        Some(PrunedRender::new(&expr, p, backend).map_err(|e| failure(e, &text))?)
    } else if args.no_prune {
        None
    } else {
        search::default_pruned(&expr, p, gpu)
    };
    if let Some(pruned) = pruned {
        return render_pruned(&args, &text, &pruned, (width, height), region, format);
    }
    let choice = BackendChoice::from(args.backend);
    let eval =
        Evaluator::new(&expr, precision(args.precision), choice).map_err(|e| failure(e, &text))?;
    report_fallback(&eval);
    let mut opts = RenderOptions::new(width, height, region);
    if let Some(tiles) = &args.tiles {
        opts.tiles = tiles.clone();
    }
    let start = Instant::now();
    let mut image = search::render(&eval, &opts).map_err(|e| failure(e, &text))?;
    let mut times = vec![start.elapsed().as_secs_f64()];
    if let Some(n) = args.repeat {
        // The first render compiled and loaded the search kernels: time the next n.
        times.clear();
        for _ in 0..n.max(1) {
            let start = Instant::now();
            image = search::render(&eval, &opts).map_err(|e| failure(e, &text))?;
            times.push(start.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    if args.stats || args.repeat.is_some() {
        let timing = match args.repeat {
            Some(_) => format!(
                "fastest {:.3} ms, median {:.3} ms of {}",
                times[0] * 1e3,
                times[times.len() / 2] * 1e3,
                times.len()
            ),
            None => format!(
                "{:.3} ms (with the first use's kernel loading)",
                times[0] * 1e3
            ),
        };
        eprintln!(
            "ivjit render: {}x{} on the {} ({}): {timing}; {} boxes",
            width,
            height,
            eval.backend().name(),
            eval.precision().name(),
            image.boxes()
        );
        for r in &image.rounds {
            eprintln!(
                "  tiles of {:>3} px: {:>9} boxes, {:>9} inside, {:>9} outside, {:>9} boundary",
                r.tile, r.boxes, r.inside, r.outside, r.boundary
            );
        }
    }
    let bytes = match format {
        Format::Npy => npy(&image)?,
        Format::Png => png(&image)?,
    };
    super::output::write(&args.output, &bytes)
}

/// The search with per-tile pruned programs (`--prune`, and the default where it pays; the same
/// classes as without: each boundary tile's children run the program pruned for it), the way
/// the library runs it ([`PrunedRender`]: tapes run by the interpreter on either backend).
fn render_pruned(
    args: &RenderArgs,
    text: &str,
    pruned: &PrunedRender,
    (width, height): (u32, u32),
    region: [f64; 4],
    format: Format,
) -> Result<(), Failure> {
    let mut opts = RenderOptions::new(width, height, region);
    opts.tiles = match &args.tiles {
        Some(tiles) => tiles.clone(),
        None => pruned.default_tiles(width, height),
    };
    let p = precision(args.precision);
    // The image written (and with --repeat the untimed warm-up); the timed frames leave
    // theirs where it arrived (on the GPU, in page-locked host memory the renderer keeps).
    let start = Instant::now();
    let (image, lengths) = pruned.render(&opts).map_err(|e| failure(e, text))?;
    let mut times = vec![start.elapsed().as_secs_f64()];
    if let Some(n) = args.repeat {
        times.clear();
        for _ in 0..n.max(1) {
            let start = Instant::now();
            pruned
                .render_with(&opts, &mut |_| {})
                .map_err(|e| failure(e, text))?;
            times.push(start.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    if args.stats || args.repeat.is_some() {
        let (place, unit) = (pruned.runner(), pruned.unit());
        eprintln!(
            "ivjit render, pruned: {width}x{height} on {place} ({}): fastest {:.3} ms, median \
             {:.3} ms of {}; {} boxes",
            p.name(),
            times[0] * 1e3,
            times[times.len() / 2] * 1e3,
            times.len(),
            image.boxes()
        );
        for (r, (_, len)) in image.rounds.iter().zip(&lengths) {
            eprintln!(
                "  tiles of {:>3} px: {:>9} boxes, {:>9} inside, {:>9} outside, {:>9} boundary; \
                 {len:>8.1} {unit} per box on average",
                r.tile, r.boxes, r.inside, r.outside, r.boundary
            );
        }
    }
    let bytes = match format {
        Format::Npy => npy(&image)?,
        Format::Png => png(&image)?,
    };
    super::output::write(&args.output, &bytes)
}

/// `z0,z1`.
fn parse_zrange(s: &str) -> Result<(f64, f64), Failure> {
    let bad = || {
        Failure::input(format!(
            "--zrange {s}: expected z0,z1 with z0 < z1, e.g. --zrange=-1,1"
        ))
    };
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let (z0, z1): (f64, f64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if !(z0.is_finite() && z1.is_finite() && z0 < z1) {
        return Err(bad());
    }
    Ok((z0, z1))
}

/// 3-D: f(x, y, z) seen from above. The ray of pixel (i, j) is the vertical line through the
/// pixel's center (x, y, as doubles: `x0 + (j + 1/2) dx`, `y1 - (i + 1/2) dy`), searched from
/// z1 down to z0 by the ray rule (`ivjit::search::ray`) to 1/steps of the range. The depth
/// map holds, per pixel, the height z1 - t_lo of the top of the hit piece: no point of the
/// surface on that line lies above it. `.npy`: float64 (height, width), NaN where the line
/// provably misses the surface; `.png`: the height map shaded by its slopes, black for a miss.
fn render_depth(
    args: &RenderArgs,
    text: &str,
    surface: &Expression,
    (width, height): (u32, u32),
    region: [f64; 4],
    format: Format,
) -> Result<(), Failure> {
    let map = ray::DepthMap {
        width,
        height,
        region,
        zrange: parse_zrange(&args.zrange)?,
        steps: args.steps,
    };
    // `along_rays` checks the region, the heights and the steps.
    let expr = map.along_rays(surface).map_err(|e| failure(e, text))?;
    let composed = expr.source().to_string();
    let choice = BackendChoice::from(args.backend);
    let eval = Evaluator::new(&expr, precision(args.precision), choice)
        .map_err(|e| failure(e, &composed))?;
    report_fallback(&eval);
    let [x0, x1, y0, y1] = region;
    let (dx, dy) = ((x1 - x0) / width as f64, (y1 - y0) / height as f64);
    // Pruned when asked, and by default where the plain search would run on the CPU and the
    // expression has a min or max (the pruned search runs on the CPU only; measured in
    // docs/render.md: the colonnade's map several times faster pruned).
    let prune =
        args.prune || (!args.no_prune && eval.backend() == Backend::Cpu && search::prunes(&expr));
    // The pruned search takes the rays made here (not timed); the plain one makes them itself.
    let rays = if prune {
        map.rays().map_err(|e| failure(e, text))?
    } else {
        Vec::new()
    };
    let start = Instant::now();
    if prune {
        // Blocks of rays with pruned tapes (CPU); a block size of 1 would prune for every
        // ray, so the last block's rays are searched with its tape instead.
        if matches!(args.backend, BackendArg::Gpu) {
            return Err(Failure::input(
                "--prune runs on the CPU's tape interpreter (3-D pruned tapes are not run on the \
                 GPU yet); use --backend cpu or auto, or leave out --prune",
            ));
        }
        let tiles = args.tiles.clone().unwrap_or_else(|| vec![64, 8, 1]);
        let mut blocks: Vec<u32> = tiles.iter().copied().filter(|&t| t > 1).collect();
        if blocks.is_empty() {
            blocks.push(8);
        }
        let p = precision(args.precision);
        let (found, levels) = search::prune::first_hits_pruned(&expr, p, &rays, width, &blocks, 8)
            .map_err(|e| failure(e, &composed))?;
        if args.stats || args.repeat.is_some() {
            eprintln!(
                "ivjit render, pruned: {width}x{height} depth map on the cpu ({}): {:.3} ms; \
                 {} boxes",
                p.name(),
                start.elapsed().as_secs_f64() * 1e3,
                found.boxes
            );
            for l in &levels {
                let what = if l.tile == 0 {
                    "rays searched".to_string()
                } else {
                    format!("blocks of {:>3} rays", l.tile)
                };
                eprintln!(
                    "  {what}: {:>9}; {:>8.1} tape instructions per block or ray on average",
                    l.boxes, l.mean_len
                );
            }
        }
        return write_depth(
            args,
            &map.heights(&found.hits),
            (width, height),
            (dx, dy),
            format,
        );
    }
    // The map's rays made by the search (on a GPU, by the device).
    let found = map
        .first_hits(&eval, 8)
        .map_err(|e| failure(e, &composed))?;
    let first = start.elapsed().as_secs_f64();
    // With --repeat, the search again n times after the first (which loads the kernels).
    let mut times = Vec::new();
    for _ in 0..args.repeat.unwrap_or(0) {
        let start = Instant::now();
        map.first_hits(&eval, 8)
            .map_err(|e| failure(e, &composed))?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    if args.stats || args.repeat.is_some() {
        let repeated = repeated(&times);
        eprintln!(
            "ivjit render: {width}x{height} depth map on the {} ({}): {:.3} ms \
             (with the first use's kernel loading){repeated}; {} boxes, {} rays finished on the \
             CPU",
            eval.backend().name(),
            eval.precision().name(),
            first * 1e3,
            found.boxes,
            found.finished_on_cpu
        );
    }
    write_depth(
        args,
        &map.heights(&found.hits),
        (width, height),
        (dx, dy),
        format,
    )
}

/// 3-D by voxels ([`ivjit::search::voxels`]): the depth map of the highest voxel not proven
/// outside in each pixel's column, `steps` voxels over the z range, written as
/// [`render_depth`]'s (the height is the voxel's top, NaN where the whole column was proven
/// outside).
fn render_voxels(
    args: &RenderArgs,
    text: &str,
    surface: &Expression,
    (width, height): (u32, u32),
    [x0, x1, y0, y1]: [f64; 4],
    format: Format,
) -> Result<(), Failure> {
    use ivjit::search::tape::TapeBackend;
    use ivjit::search::voxels::{VoxelOptions, VoxelRenderer};
    let (z0, z1) = parse_zrange(&args.zrange)?;
    let depth = u32::try_from(args.steps).unwrap_or(u32::MAX);
    let mut opts = VoxelOptions::new(width, height, depth, [x0, x1, y0, y1, z0, z1]);
    if let Some(tiles) = &args.tiles {
        opts.tiles = tiles.clone();
    }
    let gpu = match args.backend {
        BackendArg::Gpu => true,
        BackendArg::Cpu => false,
        BackendArg::Auto => ivjit::detect_gpu().is_ok(),
    };
    let (backend, name) = if gpu {
        (TapeBackend::Gpu, "gpu")
    } else {
        (TapeBackend::Cpu, "cpu")
    };
    let p = precision(args.precision);
    let start = Instant::now();
    let renderer = VoxelRenderer::new(surface, p, backend).map_err(|e| failure(e, text))?;
    // Normals from the pruned tapes, in the frame, where the tapes' derivative rules cover
    // every operation; else (a function run by its lowering) from f's gradient program after.
    let in_frame = args.normals && renderer.differentiates();
    let frame = || {
        if in_frame {
            let (map, normals, stats) = renderer.render_with_normals(&opts)?;
            Ok::<_, ivjit::Error>((map, Some(normals), stats))
        } else {
            let (map, stats) = renderer.render(&opts)?;
            Ok((map, None, stats))
        }
    };
    let (map, normals, stats) = frame().map_err(|e| failure(e, text))?;
    let first = start.elapsed().as_secs_f64();
    // The timed frames end with the map (and normals) where they arrived (on the GPU,
    // page-locked memory the renderer keeps), not copied into new buffers.
    let mut times = Vec::new();
    for _ in 0..args.repeat.unwrap_or(0) {
        let start = Instant::now();
        renderer
            .render_lent(&opts, in_frame, &mut |_, _| {})
            .map_err(|e| failure(e, text))?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    if args.stats || args.repeat.is_some() {
        let repeated = repeated(&times);
        let with = if in_frame {
            " with normals from the pruned tapes"
        } else {
            ""
        };
        eprintln!(
            "ivjit render, voxels: {width}x{height}x{depth} depth map{with} on the {name} ({}): \
             {:.3} ms (with the tape's preparation){repeated}",
            p.name(),
            first * 1e3,
        );
        for (r, s) in map.rounds.iter().zip(&stats) {
            eprintln!(
                "  tiles of {:>3}: {:>10} evaluated ({} inside, {} outside, {} boundary); \
                 {:>8.1} tape instructions per tile on average",
                r.tile, r.boxes, r.inside, r.outside, r.boundary, s.mean_len
            );
        }
    }
    let heights = map.tops((z0, z1));
    let (dx, dy) = ((x1 - x0) / width as f64, (y1 - y0) / height as f64);
    if !args.normals {
        return write_depth(args, &heights, (width, height), (dx, dy), format);
    }
    if let Some(normals) = normals {
        if args.stats || args.repeat.is_some() {
            let filled = map.heights.iter().filter(|&&k| k > 0).count();
            let certain = normals.iter().filter(|n| n.is_some()).count();
            eprintln!(
                "  normals: {certain} of {filled} filled columns certified, {} uncertain",
                filled - certain
            );
        }
        return write_normals(args, &heights, &normals, (width, height), (dx, dy), format);
    }
    // The gradient's program on the same backend (its evaluator's choice).
    let start = Instant::now();
    let (g, _) = surface.gradient().map_err(|e| failure(e, text))?;
    let choice = if gpu {
        BackendChoice::Gpu
    } else {
        BackendChoice::Cpu
    };
    let gradient = Evaluator::new(&g, p, choice).map_err(|e| failure(e, g.source()))?;
    let normals = renderer
        .normals(&gradient, &map, &opts)
        .map_err(|e| failure(e, text))?;
    let first = start.elapsed().as_secs_f64();
    // With --repeat, the normals again (the gradient compiled): a frame's share.
    let mut times = Vec::new();
    for _ in 0..args.repeat.unwrap_or(0) {
        let start = Instant::now();
        renderer
            .normals(&gradient, &map, &opts)
            .map_err(|e| failure(e, text))?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    if args.stats || args.repeat.is_some() {
        let filled = map.heights.iter().filter(|&&k| k > 0).count();
        let certain = normals.iter().filter(|n| n.is_some()).count();
        let repeated = repeated(&times);
        eprintln!(
            "  normals: {certain} of {filled} filled columns certified, {} uncertain; {:.3} ms \
             (with the gradient's compilation){repeated}",
            filled - certain,
            first * 1e3
        );
    }
    write_normals(args, &heights, &normals, (width, height), (dx, dy), format)
}

/// `; again: fastest ... ms, median ... ms of n` for the sorted times of `--repeat`'s frames
/// (nothing for none).
fn repeated(times: &[f64]) -> String {
    match times.len() {
        0 => String::new(),
        n => format!(
            "; again: fastest {:.3} ms, median {:.3} ms of {n}",
            times[0] * 1e3,
            times[n / 2] * 1e3
        ),
    }
}

/// A float64 `.npy` array of `shape` holding `values` in order.
fn npy_f64(shape: &[u64], values: impl Iterator<Item = f64>) -> Result<Vec<u8>, Failure> {
    use npyz::WriterBuilder;
    let mut out = Vec::new();
    let fail = |e: std::io::Error| Failure::runtime(format!("cannot encode the map: {e}"));
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut out)
        .begin_nd()
        .map_err(fail)?;
    w.extend(values).map_err(fail)?;
    w.finish().map_err(fail)?;
    Ok(out)
}

/// A light from the upper left, above: the pictures' shading of a unit normal (grey levels
/// 40 to 255).
fn shade(n: [f64; 3]) -> u8 {
    let light = [-0.5f64, 0.5, 0.707];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    let lit = (n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / len;
    (40.0 + 215.0 * lit.clamp(0.0, 1.0)).round() as u8
}

/// Writes a depth map with its certified normals (see `--normals`).
fn write_normals(
    args: &RenderArgs,
    depth: &[f64],
    normals: &[Option<[f64; 3]>],
    (width, height): (u32, u32),
    (dx, dy): (f64, f64),
    format: Format,
) -> Result<(), Failure> {
    let bytes = match format {
        Format::Npy => {
            let values = depth.iter().zip(normals).flat_map(|(&z, n)| {
                let [a, b, c] = n.unwrap_or([f64::NAN; 3]);
                [z, a, b, c]
            });
            npy_f64(&[height as u64, width as u64, 4], values)?
        }
        Format::Png => {
            let (w, h) = (width as usize, height as usize);
            let slopes = slope_normals(depth, (w, h), (dx, dy));
            let rgb: Vec<u8> = (0..w * h)
                .flat_map(|p| match (depth[p].is_nan(), normals[p]) {
                    (true, _) => [0, 0, 0],
                    (false, Some(n)) => [shade(n); 3],
                    (false, None) => {
                        let g = shade(slopes[p]);
                        [g, g / 3, g / 3]
                    }
                })
                .collect();
            encode_png(&rgb, width, height, png::ColorType::Rgb)?
        }
    };
    super::output::write(&args.output, &bytes)
}

/// Each pixel's normal from the height map's slopes (central differences; a missing
/// neighbour counts as flat): the shading of a map without certified normals.
fn slope_normals(depth: &[f64], (w, h): (usize, usize), (dx, dy): (f64, f64)) -> Vec<[f64; 3]> {
    let at = |i: usize, j: usize| depth[i.min(h - 1) * w + j.min(w - 1)];
    let slope = |a: f64, b: f64, step: f64| {
        if a.is_nan() || b.is_nan() {
            0.0
        } else {
            (a - b) / step
        }
    };
    (0..w * h)
        .map(|p| {
            let (i, j) = (p / w, p % w);
            // Row i grows downwards (y decreasing), column j rightwards (x increasing).
            let zx = slope(at(i, j + 1), at(i, j.saturating_sub(1)), 2.0 * dx);
            let zy = slope(at(i.saturating_sub(1), j), at(i + 1, j), 2.0 * dy);
            [-zx, -zy, 1.0]
        })
        .collect()
}

/// Writes a depth map (a height per pixel, NaN for a miss); `(dx, dy)` is the pixel size, for
/// the shading's slopes.
fn write_depth(
    args: &RenderArgs,
    depth: &[f64],
    (width, height): (u32, u32),
    (dx, dy): (f64, f64),
    format: Format,
) -> Result<(), Failure> {
    let bytes = match format {
        Format::Npy => npy_f64(&[height as u64, width as u64], depth.iter().copied())?,
        Format::Png => {
            // Shaded from the height map's slopes (a light from the upper left), black for a
            // miss: a picture of the surface seen from above.
            let (w, h) = (width as usize, height as usize);
            let slopes = slope_normals(depth, (w, h), (dx, dy));
            let grey: Vec<u8> = (0..w * h)
                .map(|p| {
                    if depth[p].is_nan() {
                        0
                    } else {
                        shade(slopes[p])
                    }
                })
                .collect();
            grey_png(&grey, width, height)?
        }
    };
    super::output::write(&args.output, &bytes)
}

enum Format {
    Npy,
    Png,
}

impl Format {
    fn of(path: &Path) -> Result<Format, Failure> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("npy") => Ok(Format::Npy),
            Some("png") => Ok(Format::Png),
            _ => Err(Failure::input(format!(
                "--output {}: the image is written as .npy (classes 0 outside, 1 inside, \
                 2 boundary) or .png; name the file with one of those extensions",
                path.display()
            ))),
        }
    }
}

/// The classes as a `uint8` array of shape (height, width).
fn npy(image: &search::Rendered) -> Result<Vec<u8>, Failure> {
    use npyz::WriterBuilder;
    let mut out = Vec::with_capacity(128 + image.classes.len());
    let fail = |e: std::io::Error| Failure::runtime(format!("cannot encode the image: {e}"));
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[image.height as u64, image.width as u64])
        .writer(&mut out)
        .begin_nd()
        .map_err(fail)?;
    w.extend(image.classes.iter().copied()).map_err(fail)?;
    w.finish().map_err(fail)?;
    Ok(out)
}

/// A grey-scale picture: inside black, outside white, boundary mid-grey.
fn png(image: &search::Rendered) -> Result<Vec<u8>, Failure> {
    let pixels: Vec<u8> = image
        .classes
        .iter()
        .map(|&c| match c {
            INSIDE => 0,
            BOUNDARY => 128,
            _ => 255,
        })
        .collect();
    grey_png(&pixels, image.width, image.height)
}

/// An 8-bit grey-scale PNG.
pub(super) fn grey_png(pixels: &[u8], width: u32, height: u32) -> Result<Vec<u8>, Failure> {
    encode_png(pixels, width, height, png::ColorType::Grayscale)
}

/// A PNG of `pixels`, 8 bits per channel of `color`.
fn encode_png(
    pixels: &[u8],
    width: u32,
    height: u32,
    color: png::ColorType,
) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    let fail = |e: png::EncodingError| Failure::runtime(format!("cannot encode the image: {e}"));
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(fail)?;
    w.write_image_data(pixels).map_err(fail)?;
    w.finish().map_err(fail)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_regions_parse() {
        assert_eq!(parse_size("640x480").ok().map(|s| s.0), Some(640));
        assert!(parse_size("640").is_err());
        assert_eq!(
            parse_region("-2, 2, -1.5, 1.5").ok(),
            Some([-2.0, 2.0, -1.5, 1.5])
        );
        assert!(parse_region("0,1,2").is_err());
        assert!(parse_region("0,1,a,2").is_err());
    }
}
