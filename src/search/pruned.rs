//! The one pruned 2-D render path of the library, which the CLI (`render`, on by default where it
//! pays) and the Python package (`render(prune=...)`) both call: tapes run by the interpreter on
//! the chosen backend where the expression has one ([`super::tape`]); else, on the CPU, programs
//! specialized per tile and lowered ([`super::prune`]). Every path gives the plain render's
//! classes (each module says why).

use super::tape::{TapeBackend, TapeRenderer};
use super::{RenderOptions, Rendered, SearchError};
use crate::ir::{NodeId, Op};
use crate::{Backend, Error, Expression, Precision};

/// A 2-D render with per-tile pruned programs, prepared once (the tape built, and on the GPU
/// uploaded with its interpreter loaded), then [`PrunedRender::render`] per frame.
pub struct PrunedRender<'a> {
    how: How<'a>,
}

enum How<'a> {
    Tape(Box<TapeRenderer>, Backend),
    Specialized(&'a Expression, Precision),
}

/// What one round of a pruned render ran: the tile size and the mean length of the programs its
/// tiles were evaluated with, in [`PrunedRender::unit`]s.
pub type MeanLength = (u32, f64);

impl<'a> PrunedRender<'a> {
    /// The pruned render of `expr` on `backend`: the tape interpreter where the expression has
    /// a tape; otherwise the CPU's region specialization, or, on the GPU, the tape's error
    /// (the GPU runs tapes only).
    pub fn new(
        expr: &'a Expression,
        precision: Precision,
        backend: Backend,
    ) -> Result<PrunedRender<'a>, Error> {
        let tape_backend = match backend {
            Backend::Gpu => TapeBackend::Gpu,
            Backend::Cpu => TapeBackend::Cpu,
        };
        let how = match TapeRenderer::new(expr, precision, tape_backend) {
            Ok(r) => How::Tape(Box::new(r), backend),
            Err(Error::Search(SearchError::Tape(_))) if backend == Backend::Cpu => {
                How::Specialized(expr, precision)
            }
            Err(e) => return Err(e),
        };
        Ok(PrunedRender { how })
    }

    /// Where it runs.
    pub fn backend(&self) -> Backend {
        match self.how {
            How::Tape(_, b) => b,
            How::Specialized(..) => Backend::Cpu,
        }
    }

    /// What runs the tiles, in words (for reports).
    pub fn runner(&self) -> &'static str {
        match self.how {
            How::Tape(_, Backend::Gpu) => "the gpu's tape interpreter",
            How::Tape(_, Backend::Cpu) => "the cpu's tape interpreter",
            How::Specialized(..) => "the cpu, programs specialized per tile",
        }
    }

    /// The unit of [`MeanLength`]: tape instructions (interval operations) or scalar
    /// instructions.
    pub fn unit(&self) -> &'static str {
        match self.how {
            How::Tape(..) => "tape instructions",
            How::Specialized(..) => "scalar instructions",
        }
    }

    /// One frame: the image of `opts` and, per round, the mean program length.
    pub fn render(&self, opts: &RenderOptions) -> Result<(Rendered, Vec<MeanLength>), Error> {
        match &self.how {
            How::Tape(r, _) => {
                let (image, stats) = r.render(opts)?;
                Ok((image, stats.iter().map(|s| (s.tile, s.mean_len)).collect()))
            }
            How::Specialized(expr, p) => {
                let (image, stats) = super::render_pruned(expr, *p, opts)?;
                Ok((
                    image,
                    stats.iter().map(|s| (s.tile, s.mean_insts)).collect(),
                ))
            }
        }
    }
}

/// Whether pruning can shorten `expr`'s programs on a tile: it has a `min` or a `max`, whose
/// side a tile may decide. (Without one, a pruned render runs the whole program on every tile,
/// through an interpreter or a specializer: never faster than the plain render.)
pub fn prunes(expr: &Expression) -> bool {
    let g = expr.ir();
    (0..g.len()).any(|i| matches!(g.op(NodeId(i as u32)), Op::Min(..) | Op::Max(..)))
}

/// The default of a 2-D render (no `--prune` / `--no-prune`): pruned where `expr` [`prunes`]
/// and the pruned render runs on the backend the plain one would use (`gpu`: a GPU is used),
/// so the choice never moves a render between CPU and GPU. Measured: on the CPU the pruned
/// render is faster even for a 2-node `min` (docs/render.md); on the GPU the tape interpreter
/// renders Prospero in 1.2 ms against 11 ms for the compiled full program.
pub fn default_pruned<'a>(
    expr: &'a Expression,
    precision: Precision,
    gpu: bool,
) -> Option<PrunedRender<'a>> {
    if !prunes(expr) {
        return None;
    }
    let backend = if gpu { Backend::Gpu } else { Backend::Cpu };
    PrunedRender::new(expr, precision, backend).ok()
}
