//! Step 1 of the mesh: the region's cells classified by subdivision. A cell proven outside
//! (f > 0) or inside (f < 0) is kept whole at its level; the others are cut in eight down to
//! the finest level, where they are the boundary cells. Where the field runs tapes, each cut
//! cell's tape is pruned on it and its children run the pruned one: a boundary cell keeps its
//! parent's, which every later evaluation inside it runs ([`Cells::tape_for`]).

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

use super::{pack, Field, MeshStats, Space, TapeId};
use crate::search::classify;
use crate::search::{BOUNDARY, INSIDE, OUTSIDE};
use crate::Error;

/// The classified cells: proven blocks per level, and the boundary cells of the finest level.
pub(crate) struct Cells {
    depth: u32,
    n: u32,
    /// `proven[l]`: the cells of level l (`2^l` a side) proven outside or inside, by key.
    proven: Vec<HashMap<u64, u8>>,
    /// The finest cells where nothing was proven.
    pub boundary: Vec<[u32; 3]>,
    /// The boundary cells by key, with the tape they ran (valid on the cell's box).
    boundary_set: HashMap<u64, TapeId>,
}

pub(crate) fn classify_cells(
    field: &Field,
    space: &Space,
    stats: &mut MeshStats,
) -> Result<Cells, Error> {
    let (depth, n) = (space.depth, space.n);
    let mut proven: Vec<HashMap<u64, u8>> = vec![HashMap::default(); depth as usize + 1];
    let mut level: Vec<([u32; 3], TapeId)> = vec![([0, 0, 0], 0)];
    let mut boundary = Vec::new();
    let mut boundary_set = HashMap::default();
    for l in 0..=depth {
        crate::search::interrupt::check()?;
        // A cell of level l spans 2^(depth - l) finest cells: 2^(depth - l + 1) half cells.
        let side = 2u64 << (depth - l);
        let boxes: Vec<(TapeId, [[f64; 2]; 3])> = level
            .par_iter()
            .map(|&(c, tape)| {
                let lo = c.map(|i| i as u64 * side);
                (tape, space.box_of(lo, lo.map(|t| t + side), 2 * n as u64))
            })
            .collect();
        let (enclosures, tapes) = field.classify(&boxes, l < depth)?;
        let classes: Vec<u8> = enclosures
            .par_iter()
            .map(|&[lo, hi]| classify(lo, hi))
            .collect();
        // The children of the cut cells, in the level's order (a cut cell's children run its
        // pruned tape).
        let next: Vec<([u32; 3], TapeId)> = if l < depth {
            level
                .par_iter()
                .zip(&classes)
                .zip(&tapes)
                .filter(|((_, class), _)| **class == BOUNDARY)
                .flat_map_iter(|((&(c, _), _), &child_tape)| {
                    (0..8u32).map(move |d| {
                        let child = [
                            2 * c[0] + (d & 1),
                            2 * c[1] + (d >> 1 & 1),
                            2 * c[2] + (d >> 2),
                        ];
                        (child, child_tape)
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let leaves = 1u64 << (3 * (depth - l));
        for (&(c, tape), &class) in level.iter().zip(&classes) {
            match class {
                BOUNDARY if l < depth => {}
                BOUNDARY => {
                    boundary.push(c);
                    boundary_set.insert(pack(c), tape);
                }
                class => {
                    if class == OUTSIDE {
                        stats.outside_cells += leaves;
                    } else {
                        stats.inside_cells += leaves;
                    }
                    proven[l as usize].insert(pack(c), class);
                }
            }
        }
        level = next;
    }
    stats.boundary_cells = boundary.len() as u64;
    Ok(Cells {
        depth,
        n,
        proven,
        boundary,
        boundary_set,
    })
}

impl Cells {
    /// The class of the finest cell `c` (in the grid): [`OUTSIDE`], [`INSIDE`] or [`BOUNDARY`].
    pub fn class_of(&self, c: [u32; 3]) -> u8 {
        if self.boundary_set.contains_key(&pack(c)) {
            return BOUNDARY;
        }
        // Finest first: the cells asked about are next to boundary cells, mostly in small
        // blocks.
        for l in (0..=self.depth).rev() {
            let s = self.depth - l;
            if let Some(&class) = self.proven[l as usize].get(&pack(c.map(|i| i >> s))) {
                return class;
            }
        }
        BOUNDARY
    }

    /// The finest cells holding the lattice point `v` (half-cell units): one per axis where
    /// the coordinate is odd (inside a cell), two where it is even (on a cell's side), fewer
    /// at the region's faces.
    pub fn holding(&self, v: [u32; 3]) -> impl Iterator<Item = [u32; 3]> + '_ {
        let n = self.n;
        let range = move |t: u32| -> (u32, u32) {
            if t % 2 == 1 {
                (t / 2, t / 2)
            } else {
                ((t / 2).max(1) - 1, (t / 2).min(n - 1))
            }
        };
        let [(a0, a1), (b0, b1)] = [range(v[0]), range(v[1])];
        let (c0, c1) = range(v[2]);
        (a0..=a1).flat_map(move |i| (b0..=b1).flat_map(move |j| (c0..=c1).map(move |k| [i, j, k])))
    }

    /// The tape for evaluations at lattice point `v` or inside an element centered there
    /// (half-cell units): that of the first boundary cell holding it (in [`Cells::holding`]'s
    /// order, so the same whoever asks), valid on that cell's box, which holds every point
    /// and piece of the element; f's own (0) where no boundary cell holds it.
    pub fn tape_for(&self, v: [u32; 3]) -> TapeId {
        self.holding(v)
            .find_map(|c| self.boundary_set.get(&pack(c)).copied())
            .unwrap_or(0)
    }

    /// The tape for evaluations on the segment between lattice points `a` and `b` (every
    /// point between them coordinate by coordinate): that of the first boundary cell holding
    /// both, else f's own.
    pub fn tape_between(&self, a: [u32; 3], b: [u32; 3]) -> TapeId {
        self.holding(a)
            .filter(|c| self.holding(b).any(|d| d == *c))
            .find_map(|c| self.boundary_set.get(&pack(c)).copied())
            .unwrap_or(0)
    }

    /// The sign a proven cell holding `v` gives it (`true`: f < 0), if one does.
    pub fn proven_sign(&self, v: [u32; 3]) -> Option<bool> {
        self.holding(v).find_map(|c| match self.class_of(c) {
            INSIDE => Some(true),
            OUTSIDE => Some(false),
            _ => None,
        })
    }

    /// The finest cells on the region's faces inside blocks proven inside: where the caps go.
    pub fn inside_on_faces(&self) -> Vec<[u32; 3]> {
        let mut out = Vec::new();
        for (l, blocks) in self.proven.iter().enumerate() {
            let s = self.depth - l as u32;
            for (&key, &class) in blocks {
                if class != INSIDE {
                    continue;
                }
                let b = super::unpack(key);
                let (lo, len) = (b.map(|i| i << s), 1u32 << s);
                for axis in 0..3 {
                    for face in [0, self.n - 1] {
                        if !(lo[axis]..lo[axis] + len).contains(&face) {
                            continue;
                        }
                        let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
                        for u in 0..len {
                            for w in 0..len {
                                let mut c = [0; 3];
                                c[axis] = face;
                                c[a1] = lo[a1] + u;
                                c[a2] = lo[a2] + w;
                                out.push(c);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}
