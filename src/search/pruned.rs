//! The one pruned 2-D render path of the library, which the CLI (`render`, on by default where it
//! pays) and the Python package (`render(prune=...)`) both call: the expression's tape
//! ([`super::tape`]), pruned per tile and run by the interpreter of the chosen backend. The
//! tape runs every operation of one or two arguments (those outside the generated set by
//! their lowering), so one program type serves every 2-D expression on both backends.

use super::tape::{Tape, TapeBackend, TapeError, TapeRenderer};
use super::{RenderOptions, Rendered, SearchError};
use crate::ir::{NodeId, Op};
use crate::{Backend, Error, Expression, Precision};

/// A 2-D render with per-tile pruned programs, prepared once (the tape built, and on the GPU
/// uploaded with its interpreter loaded), then [`PrunedRender::render`] per frame.
pub struct PrunedRender {
    renderer: TapeRenderer,
    backend: Backend,
}

/// What one round of a pruned render ran: the tile size and the mean length of the programs its
/// tiles were evaluated with, in [`PrunedRender::unit`]s.
pub type MeanLength = (u32, f64);

impl PrunedRender {
    /// The pruned render of `expr` on `backend` (the tape's error where it has none: a
    /// variable other than x and y, more than 65,535 slots or constants).
    pub fn new(
        expr: &Expression,
        precision: Precision,
        backend: Backend,
    ) -> Result<PrunedRender, Error> {
        PrunedRender::of(expr, Tape::new(expr.ir()), precision, backend)
    }

    /// [`PrunedRender::new`] given what building `expr`'s tape gave.
    fn of(
        expr: &Expression,
        tape: Result<Tape, TapeError>,
        precision: Precision,
        backend: Backend,
    ) -> Result<PrunedRender, Error> {
        let tape_backend = match backend {
            Backend::Gpu => TapeBackend::Gpu,
            Backend::Cpu => TapeBackend::Cpu,
        };
        let tape = tape.map_err(SearchError::Tape)?;
        let renderer = TapeRenderer::with_tape(expr, tape, precision, tape_backend)?;
        Ok(PrunedRender { renderer, backend })
    }

    /// Where it runs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// What runs the tiles, in words (for reports).
    pub fn runner(&self) -> &'static str {
        match self.backend {
            Backend::Gpu => "the gpu's tape interpreter",
            Backend::Cpu => "the cpu's tape interpreter",
        }
    }

    /// The unit of [`MeanLength`]: tape instructions (interval operations).
    pub fn unit(&self) -> &'static str {
        "tape instructions"
    }

    /// The tile sizes a W x H frame of this render takes by default. On the CPU 64, 8, 1 below
    /// 1024 pixels along the longer side, 128, 16, 1 from there (its cost is its work and,
    /// since that fell, what each pruned tape costs: Prospero on 1 thread of the 2-core
    /// development machine, medians, 1024² 26-30 ms against 30-33 ms with 64, 8, 1, 2048² 59-60
    /// against 69-72, 4096² 125-140 against 143-197 with 256, 32, 4, 1; at 512² 64, 8, 1 wins,
    /// 14-16 ms against 17-19; at 1024² 64, 8, 2, 1, 64, 16, 2, 1 and 32, 4, 1 were slower
    /// still: each level prunes a tape per boundary tile). On the GPU first tiles of 64
    /// pixels up to 1024 pixels along the longer side, doubled with each doubling of the size
    /// beyond (at most 512: about 16 first tiles a side), then each level 8 times finer down to
    /// 16 pixels or fewer, then pixels — 64, 8, 1 up to 1024²; 128, 16, 1 up to 2048; 256, 32,
    /// 4, 1 up to 4096; 512, 64, 8, 1 beyond: every first tile runs the whole tape, one block
    /// each, so their count sets the first level's time. Prospero on an H200 (run 43 of
    /// docs/gpu-runs.md), f64 / f32: 4096², 3.82 / 2.82 ms with 64, 8, 1 against 1.99 / 2.55
    /// ms. With sign demand (runs 141-142, medians): at 512² and 1024², 64, 8, 1 is the
    /// fastest of seven plans (0.33 / 0.38 ms at 1024²); at 2048², 128, 16, 1 (0.50 / 0.54
    /// ms against 0.60 / 0.67 with 128, 16, 2, 1); at 4096², 256, 32, 4, 1 (0.93-0.96 ms;
    /// 256, 64, 8, 1 and 512, 64, 8, 1 within 3 %). The classes do not depend on the plan (a pixel's class
    /// is its own box's wherever a level reaches it, and a tile's proof holds for its pixels).
    pub fn default_tiles(&self, width: u32, height: u32) -> Vec<u32> {
        pruned_tiles(self.backend, width, height)
    }

    /// One frame: the image of `opts` and, per round, the mean program length.
    pub fn render(&self, opts: &RenderOptions) -> Result<(Rendered, Vec<MeanLength>), Error> {
        let (image, stats) = self.renderer.render(opts)?;
        Ok((image, stats.iter().map(|s| (s.tile, s.mean_len)).collect()))
    }

    /// One frame with the image lent to `f` where it arrived instead of returned
    /// ([`TapeRenderer::render_with`]): the rounds and, per round, the mean program length.
    pub fn render_with(
        &self,
        opts: &RenderOptions,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(Vec<super::Round2>, Vec<MeanLength>), Error> {
        let (rounds, stats) = self.renderer.render_with(opts, f)?;
        Ok((rounds, stats.iter().map(|s| (s.tile, s.mean_len)).collect()))
    }
}

/// [`PrunedRender::default_tiles`] of a pruned render on `backend`.
pub fn pruned_tiles(backend: Backend, width: u32, height: u32) -> Vec<u32> {
    let side = width.max(height);
    if backend == Backend::Cpu {
        return match side {
            ..1024 => vec![64, 8, 1],
            _ => vec![128, 16, 1],
        };
    }
    let mut tile = 64u32;
    while tile < 512 && side > tile * 16 {
        tile *= 2;
    }
    let mut tiles = vec![tile];
    while tile > 16 {
        tile /= 8;
        tiles.push(tile);
    }
    if tile > 1 {
        tiles.push(1);
    }
    tiles
}

/// Whether pruning can shorten `expr`'s programs on a tile: it has a `min` or a `max`, whose
/// side a tile may decide. (Without one, a pruned render runs the whole program on every tile,
/// through an interpreter: never faster than the plain render.)
pub fn prunes(expr: &Expression) -> bool {
    let g = expr.ir();
    (0..g.len()).any(|i| matches!(g.op(NodeId(i as u32)), Op::Min(..) | Op::Max(..)))
}

/// The shortest tape the GPU renders pruned by default: below it the compiled full program is
/// faster. Measured on an H200 (docs/render.md, run 12 of docs/gpu-runs.md), 1024² medians,
/// pruned against the full program: tapes of 11, 21 and 22 instructions 0.53 / 0.41 / 0.43-0.55
/// ms against 0.39 / 0.37 / 0.32-0.37 ms; 81 instructions 0.43 against 0.62 ms, 318 (32 disks)
/// 0.60 against 1.28 ms, Prospero 1.36 against 10.2-10.9 ms.
pub const GPU_PRUNED_FROM: usize = 48;

/// The default of a 2-D render (no `--prune` / `--no-prune`): pruned where `expr` [`prunes`]
/// and the pruned render runs on the backend the plain one would use (`gpu`: a GPU is used),
/// so the choice never moves a render between CPU and GPU; on the GPU only for tapes of
/// [`GPU_PRUNED_FROM`] instructions or more of the generated set (no function run by its
/// lowering). On the CPU the pruned render is faster even for a 2-node `min`, and with
/// functions (docs/render.md).
pub fn default_pruned(expr: &Expression, precision: Precision, gpu: bool) -> Option<PrunedRender> {
    if !prunes(expr) {
        return None;
    }
    // Built once: on the GPU its length decides before it is uploaded. Operations run by their
    // lowering are calls of linked device functions on the GPU, slower than the compiled full
    // program on every model measured (run 17 of docs/gpu-runs.md: 24 sin-waved disks 0.97
    // against 0.37 ms): the GPU prunes by default only tapes of the generated set.
    let tape = Tape::new(expr.ir());
    if gpu
        && tape
            .as_ref()
            .map_or(true, |t| t.len() < GPU_PRUNED_FROM || t.extended() > 0)
    {
        return None;
    }
    let backend = if gpu { Backend::Gpu } else { Backend::Cpu };
    PrunedRender::of(expr, tape, precision, backend).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default plans: on the GPU 64, 8, 1 up to 1024 pixels a side and a coarser first
    /// level beyond, on the CPU 64, 8, 1 below 1024 and 128, 16, 1 from there; every plan a
    /// valid one (each size divides
    /// the one before, the last is 1), with the classes of 64, 8, 1 where they differ.
    #[test]
    fn default_tiles_grow_with_the_image_on_the_gpu() {
        let t = |w, h| pruned_tiles(Backend::Gpu, w, h);
        assert_eq!(t(1024, 1024), [64, 8, 1]);
        assert_eq!(t(333, 250), [64, 8, 1]);
        assert_eq!(t(1, 1), [64, 8, 1]);
        assert_eq!(t(2048, 100), [128, 16, 1]);
        assert_eq!(t(4096, 4096), [256, 32, 4, 1]);
        assert_eq!(t(1 << 20, 8192), [512, 64, 8, 1]);
        assert_eq!(pruned_tiles(Backend::Cpu, 1023, 1023), [64, 8, 1]);
        assert_eq!(pruned_tiles(Backend::Cpu, 1024, 10), [128, 16, 1]);
        assert_eq!(pruned_tiles(Backend::Cpu, 4096, 4096), [128, 16, 1]);
        for side in [1u32, 7, 1000, 1025, 3000, 5000, 70000] {
            let plan = t(side, 3);
            assert_eq!(plan.last(), Some(&1));
            assert!(plan.windows(2).all(|w| w[0] % w[1] == 0 && w[0] > w[1]));
        }
        let e = Expression::parse("min(x^2 + y^2 - 0.3, max(x - 0.2, y^3 - x))").unwrap();
        let r = PrunedRender::new(&e, Precision::F64, Backend::Cpu).unwrap();
        let opts = RenderOptions {
            tiles: t(1100, 40),
            ..RenderOptions::new(1100, 40, [-1.0, 1.0, -0.1, 0.2])
        };
        let (a, _) = r.render(&opts).unwrap();
        let (b, _) = r
            .render(&RenderOptions::new(1100, 40, opts.region))
            .unwrap();
        assert_eq!(opts.tiles, [128, 16, 1]);
        assert!(a.classes == b.classes && a.rounds.len() == 3 && b.rounds.len() == 3);
    }

    /// The default prunes on the CPU wherever a min or max may be decided, never without one;
    /// on the GPU never below the measured tape length (decided before any GPU is touched).
    #[test]
    fn the_default_prunes_where_it_pays() {
        let parse = |s: &str| Expression::parse(s).unwrap();
        let small = parse("min(x^2 + y^2 - 0.25, max(x, y) - 0.5)");
        let plain = parse("x^2 + y^2 - 0.25");
        let p = Precision::F64;
        assert!(prunes(&small) && !prunes(&plain));
        let cpu = default_pruned(&small, p, false).expect("pruned on the CPU");
        assert_eq!(cpu.backend(), Backend::Cpu);
        assert!(default_pruned(&plain, p, false).is_none());
        let tape = Tape::new(small.ir()).unwrap();
        assert!(tape.len() < GPU_PRUNED_FROM, "{} instructions", tape.len());
        assert!(default_pruned(&small, p, true).is_none());
        // Functions run on the tape too.
        let waves = parse("min(sin(4*x) - y, sqrt(sqr(x) + sqr(y)) - 0.6)");
        let r = default_pruned(&waves, p, false).expect("a tape with sin");
        assert_eq!(r.backend(), Backend::Cpu);
    }
}
