//! Step 3 of the mesh: witnesses. An edge, a face or a boundary cell whose lattice vertices
//! agree in sign may still hold a part of the other sign thinner than a cell (a thin wall, a
//! thin rod). Each is searched by interval subdivision: a piece on which f's enclosure has the
//! vertices' sign is done; a piece where it has the other sign, or whose center has it, gives a
//! *witness*; other pieces are cut in two along each free axis, `witness_levels` deep. A
//! witness moves a vertex of the element (the nearer end of an edge, the center of a face or a
//! cell) to itself and gives it its sign. Cells go first, then faces, then edges, each stage
//! seeing the signs the one before changed: so a thin rod's witnesses chain from a cell's
//! center to a face's to the next cell's, and a thin wall's corners join into a sheet (edges
//! first made a wall a net of holes).

use rayon::prelude::*;

use super::lattice::{center, element_vertices, Lattice};
use super::octree::Cells;
use super::{pack, sign_of, unpack, Field, MeshOptions, MeshStats, Space, TapeId};
use crate::search::BOUNDARY;
use crate::Error;

/// What the search of one element found.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Found {
    /// f keeps the vertices' sign on the whole element.
    Proven,
    /// A point of the other sign, and its coordinates in the search's units.
    Witness([f64; 3], [u64; 3]),
    /// Neither, `witness_levels` deep.
    Unknown,
}

pub(crate) fn search(
    field: &Field,
    space: &Space,
    cells: &Cells,
    lattice: &mut Lattice,
    opts: &MeshOptions,
    stats: &mut MeshStats,
) -> Result<(), Error> {
    if opts.witness_levels == 0 {
        return Ok(());
    }
    let last = 2 * space.n;
    // Each element by its center in half-cell units: an edge's has one odd coordinate, a
    // face's two, a cell's three. Those lying in one of the region's faces (outside by
    // definition) and those held by a proven cell are left out.
    let mut around_cells: Vec<u64> = cells
        .boundary
        .par_iter()
        .flat_map_iter(|&c| around(center(c)))
        .filter(|&v| {
            let in_a_face = (0..3).any(|d| v[d] % 2 == 0 && (v[d] == 0 || v[d] == last));
            !in_a_face && cells.holding(v).all(|h| cells.class_of(h) == BOUNDARY)
        })
        .map(pack)
        .collect();
    around_cells.par_sort_unstable();
    around_cells.dedup();
    let (edges, faces): (Vec<u64>, Vec<u64>) = around_cells
        .into_iter()
        .partition(|&k| unpack(k).iter().filter(|t| *t % 2 == 1).count() == 1);
    let mut cell_centers: Vec<u64> = cells.boundary.iter().map(|&c| pack(center(c))).collect();
    cell_centers.sort_unstable();
    for (stage, elements) in [cell_centers, faces, edges].into_iter().enumerate() {
        crate::search::interrupt::check()?;
        // The elements whose vertices agree, with their sign.
        let agreeing: Vec<([u32; 3], bool)> = elements
            .par_iter()
            .map(|&k| unpack(k))
            .filter_map(|m| {
                let vs = element_vertices(m);
                let s = lattice.sign(vs[0], cells);
                vs.iter()
                    .all(|&v| lattice.sign(v, cells) == s)
                    .then_some((m, s))
            })
            .collect();
        let found = find(field, space, cells, &agreeing, opts.witness_levels)?;
        for (&(m, s), found) in agreeing.iter().zip(found) {
            let (at, fine) = match found {
                Found::Proven => continue,
                Found::Unknown => {
                    stats.uncertain += 1;
                    continue;
                }
                Found::Witness(at, fine) => (at, fine),
            };
            let target = if stage == 2 {
                // The edge's end nearer the witness, unless it is in a face of the region or
                // already changed; then the other.
                let axis = (0..3)
                    .find(|&d| m[d] % 2 == 1)
                    .expect("an edge has an odd axis");
                let mid = (m[axis] as u64) << opts.witness_levels;
                let ends = [-1i32, 1].map(|d| {
                    let mut v = m;
                    v[axis] = (v[axis] as i32 + d) as u32;
                    v
                });
                let order = if fine[axis] < mid { [0, 1] } else { [1, 0] };
                order
                    .into_iter()
                    .map(|i| ends[i])
                    .find(|&v| !lattice.on_face(v))
            } else {
                Some(m)
            };
            // A target changed by an earlier element of this stage already has the other
            // sign: the element no longer agrees, nothing to do.
            if let Some(v) = target.filter(|&v| lattice.sign(v, cells) == s) {
                lattice.flip(v, !s, at);
                match stage {
                    0 => stats.cell_witnesses += 1,
                    1 => stats.face_witnesses += 1,
                    _ => stats.edge_witnesses += 1,
                }
            }
        }
    }
    Ok(())
}

/// The centers of a cell's 12 edges and 6 faces (`m`: the cell's center).
fn around(m: [u32; 3]) -> Vec<[u32; 3]> {
    let mut out = Vec::with_capacity(18);
    for a in [-1i32, 0, 1] {
        for b in [-1i32, 0, 1] {
            for c in [-1i32, 0, 1] {
                let moved = [a, b, c].iter().filter(|d| **d != 0).count();
                if moved == 1 || moved == 2 {
                    out.push([m[0] as i32 + a, m[1] as i32 + b, m[2] as i32 + c].map(|t| t as u32));
                }
            }
        }
    }
    out
}

/// The witness search of each element (its center, the sign its vertices agree on), all
/// elements' pieces of one level a batch.
fn find(
    field: &Field,
    space: &Space,
    cells: &Cells,
    elements: &[([u32; 3], bool)],
    levels: u32,
) -> Result<Vec<Found>, Error> {
    let units = (2 * space.n as u64) << levels;
    // On the GPU, every element's search in one launch.
    if field.on_gpu() && levels <= super::gpu::WITNESS_LEVELS {
        let (out, count) = super::gpu::witnesses(field.eval, field.slot, space, elements, levels)?;
        field.count(count);
        return Ok(out
            .into_iter()
            .map(|(r, c)| match r {
                0 => Found::Proven,
                1 => Found::Witness(space.point(c, units), c),
                _ => Found::Unknown,
            })
            .collect());
    }
    let mut found = vec![Found::Proven; elements.len()];
    // Each element's tape: valid on the cells holding it.
    let tapes: Vec<TapeId> = elements.par_iter().map(|e| cells.tape_for(e.0)).collect();
    // Pieces: (element, lower corner, side along the free axes), in the search's units.
    let mut pieces: Vec<(usize, [u64; 3], u64)> = elements
        .iter()
        .enumerate()
        .map(|(e, (m, _))| {
            // Odd coordinates are free: the element spans a cell's side there.
            let lo = m.map(|t| (t as u64 - (t % 2) as u64) << levels);
            (e, lo, 2u64 << levels)
        })
        .collect();
    let free = move |e: usize| elements[e].0.map(|t| t % 2 == 1);
    for level in 0..=levels {
        crate::search::interrupt::check()?;
        pieces.retain(|p| !matches!(found[p.0], Found::Witness(..)));
        let span = |&(e, lo, side): &(usize, [u64; 3], u64)| {
            let f = free(e);
            let hi = [0, 1, 2].map(|d| lo[d] + if f[d] { side } else { 0 });
            (lo, hi)
        };
        let boxes: Vec<(TapeId, [[f64; 2]; 3])> = pieces
            .par_iter()
            .map(|p| {
                let (lo, hi) = span(p);
                (tapes[p.0], space.box_of(lo, hi, units))
            })
            .collect();
        let enclosures = field.boxes_on(&boxes)?;
        // Each piece's enclosure: the vertices' sign (done), the other sign (its center is a
        // witness: the first in the pieces' order per element) or neither (its center is
        // evaluated next). Decided in parallel, the witnesses taken in order.
        let signs: Vec<Option<bool>> = enclosures.into_par_iter().map(sign_of).collect();
        let other = |i: usize| signs[i].is_some_and(|t| t != elements[pieces[i].0].1);
        let boxed: Vec<usize> = (0..pieces.len())
            .into_par_iter()
            .filter(|&i| other(i))
            .collect();
        for i in boxed {
            let p = &pieces[i];
            witness(&mut found[p.0], space, span(p), units);
        }
        let open: Vec<(usize, [u64; 3], u64)> = (0..pieces.len())
            .into_par_iter()
            .filter(|&i| signs[i].is_none())
            .map(|i| pieces[i])
            .collect();
        let centers: Vec<[u64; 3]> = open
            .par_iter()
            .map(|p| {
                let (lo, hi) = span(p);
                [0, 1, 2].map(|d| (lo[d] + hi[d]) / 2)
            })
            .collect();
        let points: Vec<(TapeId, [f64; 3])> = open
            .par_iter()
            .zip(&centers)
            .map(|(p, &c)| (tapes[p.0], space.point(c, units)))
            .collect();
        let signs = field.signs_on(&points)?;
        // A center of the other sign is a witness (the first in order, unless the element has
        // one); the other open pieces are split, or at the last level leave their element
        // unknown where no piece found a witness. (Children of an element that gets a witness
        // at this level are dropped by the next level's `retain`.)
        let opposite = |k: usize| signs[k] == Some(!elements[open[k].0].1);
        for k in 0..open.len() {
            let e = open[k].0;
            if opposite(k) && !matches!(found[e], Found::Witness(..)) {
                found[e] = Found::Witness(space.point(centers[k], units), centers[k]);
            }
        }
        let rest = (0..open.len()).filter(|&k| !opposite(k));
        if level == levels {
            for k in rest {
                let e = open[k].0;
                if !matches!(found[e], Found::Witness(..)) {
                    found[e] = Found::Unknown;
                }
            }
            break;
        }
        let rest: Vec<usize> = rest.collect();
        let next: Vec<(usize, [u64; 3], u64)> = rest
            .par_iter()
            .flat_map_iter(|&k| {
                let (e, lo, side) = open[k];
                let f = free(e);
                let half = side / 2;
                // Children split only the free axes.
                (0..8u32)
                    .filter(move |&k| (0..3).all(|d| f[d] || k >> d & 1 == 0))
                    .map(move |k| {
                        let child =
                            [0, 1, 2].map(|d| lo[d] + if k >> d & 1 == 1 { half } else { 0 });
                        (e, child, half)
                    })
            })
            .collect();
        pieces = next;
    }
    Ok(found)
}

/// A piece whose enclosure proves the other sign: its center is a witness.
fn witness(found: &mut Found, space: &Space, (lo, hi): ([u64; 3], [u64; 3]), units: u64) {
    if !matches!(found, Found::Witness(..)) {
        let c = [0, 1, 2].map(|d| (lo[d] + hi[d]) / 2);
        *found = Found::Witness(space.point(c, units), c);
    }
}
