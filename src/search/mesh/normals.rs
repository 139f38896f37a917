//! Normals at the mesh's vertices and cells of certain topology, from f's gradient: the
//! gradient's enclosure on a box tells the surface's normal directions there, and a partial
//! derivative that keeps its sign on a cell makes f strictly monotone along that axis.

use super::octree::Cells;
use super::Placed;
use super::{Field, Mesh, MeshStats, Space};
use crate::error::SearchError;
use crate::ir::diff;
use crate::{Error, Evaluator};

/// f's gradient through its evaluator: the partials along x, y and z, and whether f is proven
/// continuous on a box.
pub(crate) struct Gradient<'a> {
    field: Field<'a>,
    layout: diff::Gradient,
    /// The output index of the partial along x, y and z (none where f does not use the axis).
    partial: [Option<usize>; 3],
}

/// A gradient's enclosure on one box.
struct Enclosure {
    partials: [[f64; 2]; 3],
    continuous: bool,
}

impl Enclosure {
    /// A partial derivative keeps one sign on the whole box, and f is continuous there.
    fn monotone(&self) -> bool {
        self.continuous && self.partials.iter().any(|&[lo, hi]| lo > 0.0 || hi < 0.0)
    }
}

impl<'a> Gradient<'a> {
    /// The gradient of an f over the variables `f_vars` through its evaluator (of f's
    /// [`crate::Expression::gradient`]).
    pub fn new(gradient: &'a Evaluator, f_vars: &[String]) -> Result<Self, Error> {
        let gp = gradient.program();
        let n = f_vars.len();
        let layout = diff::Gradient {
            outputs: 1,
            vars: n,
        };
        if gp.var_names != f_vars || gp.outputs.len() != layout.defined(0) + 1 + n {
            return Err(SearchError::Options(
                "the gradient's evaluator must evaluate f's Expression::gradient (the same \
                 variables; f's value, continuity flag and partial derivatives)"
                    .into(),
            )
            .into());
        }
        let field = Field::of(gradient)?;
        let partial = field.slot.map(|k| k.map(|v| layout.partial(0, v)));
        Ok(Gradient {
            field,
            layout,
            partial,
        })
    }

    pub fn evaluations(&self) -> u64 {
        self.field.evaluations.get()
    }

    fn enclosures(&self, boxes: &[[[f64; 2]; 3]]) -> Result<Vec<Enclosure>, Error> {
        let n = boxes.len();
        let out = self.field.eval_all(n, |i| boxes[i])?;
        let at = |o: usize, i: usize| [out[2 * o * n + i], out[(2 * o + 1) * n + i]];
        let defined = self.layout.defined(0);
        Ok((0..n)
            .map(|i| Enclosure {
                partials: self.partial.map(|o| o.map_or([0.0, 0.0], |o| at(o, i))),
                continuous: at(defined, i) == [1.0, 1.0],
            })
            .collect())
    }
}

impl Gradient<'_> {
    /// The normal each box certifies: where f is continuous on the box and a partial keeps
    /// its sign there, the gradient is nonzero on the whole box and points into the enclosure,
    /// so every normal of the surface in the box lies in the enclosure's cone; the unit
    /// direction of its middle stands for them. None elsewhere (the enclosure holds 0: no
    /// normal is proven).
    pub(crate) fn certified(
        &self,
        boxes: &[[[f64; 2]; 3]],
    ) -> Result<Vec<Option<[f64; 3]>>, Error> {
        Ok(self
            .enclosures(boxes)?
            .iter()
            .map(|e| {
                let normal = crate::search::tape::gradient::certified_normal(e.partials);
                normal.filter(|_| e.continuous)
            })
            .collect())
    }
}

/// The normal at each vertex: the gradient's enclosure on the box of the vertex's last
/// bracket (a segment whose ends' coordinates bound every point of it, so the box holds the
/// zero of f the bracket holds), its middle's direction; certain where [`Mesh::normal_certain`]
/// says.
pub(crate) fn normals(
    g: &Gradient,
    placed: &[Placed],
    mesh: &mut Mesh,
    stats: &mut MeshStats,
) -> Result<(), Error> {
    let boxes: Vec<[[f64; 2]; 3]> = placed
        .iter()
        .map(|p| {
            let (a, b) = p.bracket;
            [0, 1, 2].map(|d| [a[d].min(b[d]), a[d].max(b[d])])
        })
        .collect();
    let enclosures = g.enclosures(&boxes)?;
    mesh.normals.clear();
    mesh.normal_certain.clear();
    for (p, e) in placed.iter().zip(&enclosures) {
        let certain = p.proven && e.monotone();
        let middle = e.partials.map(|[lo, hi]| 0.5 * lo + 0.5 * hi);
        // Where the middle has no direction (an unbounded or zero enclosure), the bracket's
        // direction from inside to outside stands in.
        let fallback = [0, 1, 2].map(|d| p.bracket.1[d] - p.bracket.0[d]);
        let n = unit(middle).or_else(|| unit(fallback)).unwrap_or([0.0; 3]);
        mesh.normals.push(n);
        mesh.normal_certain.push(certain);
        stats.uncertain_normals += u64::from(!certain);
    }
    Ok(())
}

fn unit(v: [f64; 3]) -> Option<[f64; 3]> {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    (len.is_finite() && len > 0.0).then(|| v.map(|t| t / len))
}

/// How many boundary cells the gradient proves monotone along an axis.
pub(crate) fn certain_cells(g: &Gradient, space: &Space, cells: &Cells) -> Result<u64, Error> {
    let units = 2 * space.n as u64;
    let boxes: Vec<[[f64; 2]; 3]> = cells
        .boundary
        .iter()
        .map(|c| {
            let lo = c.map(|i| 2 * i as u64);
            space.box_of(lo, lo.map(|t| t + 2), units)
        })
        .collect();
    Ok(g.enclosures(&boxes)?
        .iter()
        .filter(|e| e.monotone())
        .count() as u64)
}
