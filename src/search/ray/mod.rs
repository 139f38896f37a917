//! The *first root along a ray* rule: for each ray, the front-most piece of its parameter
//! segment on which the expression may vanish, found by bisection (or k-section) with every
//! piece in front of it proven free of roots.
//!
//! The expression is f composed with the rays, in the variables `t` (the ray parameter) and `u`,
//! `v` (the ray's coordinates, passed as point intervals); a [`Ray`] gives u, v, its segment
//! `[t0, t1]` and the resolution `min_width`. Each ray keeps a stack of t-intervals, front-most
//! on top. A step pops the top interval, splits it into `split` pieces
//! (`lo + (hi - lo) * (k / split)`, rounded to nearest, the ends exact), evaluates f on each,
//! and pushes back those whose enclosure contains 0, front-most last. When the stack is empty
//! the ray has no root; when its top is at most `min_width` wide (or has no interior), that
//! piece is the ray's hit. Because every piece in front of it was excluded, **no point of the
//! surface lies on the ray before the hit piece**.
//!
//! On the CPU every unfinished ray takes one step per round, all rays of a round in one batch.
//! On the GPU each thread runs one ray's whole search (the expression compiled as a device
//! function, `ptx::try_emit_function_named`, linked with the search kernel), with the same
//! arithmetic: the hits are the same bit for bit when the expression calls no point function.
//! A ray whose stack would exceed the device's fixed depth is finished on the CPU.

use rayon::prelude::*;

use super::SearchError;

pub(crate) mod gpu;
use crate::{Backend, Error, Evaluator};

/// One ray: its coordinates (u, v), its segment `[t0, t1]` and the width at which a piece that
/// may hold a root is reported as the hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// The ray's first coordinate (a point interval of the variable `u`).
    pub u: f64,
    /// The ray's second coordinate (the variable `v`).
    pub v: f64,
    /// Start of the segment searched.
    pub t0: f64,
    /// End of the segment searched (`t0 <= t1`).
    pub t1: f64,
    /// A piece at most this wide is not split further.
    pub min_width: f64,
}

/// The rays' first hits and what the search cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Hits {
    /// Per ray: the hit piece `[lo, hi]`, or `None` when the segment provably holds no root.
    pub hits: Vec<Option<(f64, f64)>>,
    /// Boxes (pieces) evaluated.
    pub boxes: u64,
    /// Rays the GPU could not finish with its fixed stack (finished on the CPU).
    pub finished_on_cpu: usize,
    /// On the GPU: seconds from the launch of the search kernel to its status array being
    /// back on the host (the search proper, without uploading the rays); 0 on the CPU.
    pub device_seconds: f64,
}

/// The first hit of every ray on the evaluator's backend (see the module documentation);
/// `split >= 2` pieces per step.
pub fn first_hits(eval: &Evaluator, rays: &[Ray], split: u32) -> Result<Hits, Error> {
    hits_of(eval, Rays::List(rays), split)
}

/// The rays of a search: a list, or a grid whose rays the search makes (on a GPU, the device
/// makes them: nothing is packed or uploaded).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rays<'a> {
    List(&'a [Ray]),
    Grid(Grid),
}

impl Rays<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Rays::List(r) => r.len(),
            Rays::Grid(g) => g.len(),
        }
    }

    /// Ray `i`.
    pub(crate) fn ray(&self, i: usize) -> Ray {
        match self {
            Rays::List(r) => r[i],
            Rays::Grid(g) => g.ray(i),
        }
    }
}

/// The vertical lines of a depth map's pixels, row-major: ray `p` is pixel (i, j) =
/// (p / width, p % width), at `u = x0 + (j + 1/2) dx`, `v = y1 - (i + 1/2) dy` (each
/// operation rounded to nearest; the GPU kernel computes the same with `__dadd_rn`, ...), all
/// with the segment `[t0, t1]` and the same resolution.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    pub width: u32,
    pub height: u32,
    pub x0: f64,
    pub dx: f64,
    pub y1: f64,
    pub dy: f64,
    pub t0: f64,
    pub t1: f64,
    pub min_width: f64,
}

impl Grid {
    /// No grid (the kernel's grid arguments of a search of a list).
    pub(crate) const NONE: Grid = Grid {
        width: 1,
        height: 0,
        x0: 0.0,
        dx: 0.0,
        y1: 0.0,
        dy: 0.0,
        t0: 0.0,
        t1: 0.0,
        min_width: 0.0,
    };

    pub(crate) fn len(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Ray `p`.
    pub(crate) fn ray(&self, p: usize) -> Ray {
        let w = self.width as usize;
        let (i, j) = (p / w, p % w);
        Ray {
            u: self.x0 + (j as f64 + 0.5) * self.dx,
            v: self.y1 - (i as f64 + 0.5) * self.dy,
            t0: self.t0,
            t1: self.t1,
            min_width: self.min_width,
        }
    }
}

/// [`first_hits`] of a list or a grid of rays.
fn hits_of(eval: &Evaluator, rays: Rays, split: u32) -> Result<Hits, Error> {
    let slots = slots(eval)?;
    if split < 2 {
        return Err(SearchError::Options(format!(
            "split {split}: a step splits a piece into at least 2"
        ))
        .into());
    }
    // In parallel: one thread's scan of a million rays was most of the 6-8 ms a 1024² GPU
    // depth map spent outside its search (docs/gpu-runs.md, runs 161-162); the first bad ray
    // is reported, as by a scan. A grid's rays share their segment: its first ray says.
    let bad = |r: &Ray| !(r.t0 <= r.t1 && r.t0.is_finite() && r.t1.is_finite());
    let first_bad = match rays {
        Rays::List(list) => super::on_pool(|| list.par_iter().position_first(bad)),
        Rays::Grid(g) => (g.len() > 0 && bad(&g.ray(0))).then_some(0),
    };
    if let Some((i, r)) = first_bad.map(|i| (i, rays.ray(i))) {
        return Err(SearchError::Options(format!(
            "ray {i}: the segment [{}, {}] needs finite ends with t0 <= t1",
            r.t0, r.t1
        ))
        .into());
    }
    match (eval.backend(), rays) {
        (Backend::Cpu, Rays::List(list)) => super::on_pool(|| cpu(eval, slots, list, split)),
        (Backend::Cpu, Rays::Grid(g)) => {
            let list: Vec<Ray> = (0..g.len()).map(|p| g.ray(p)).collect();
            super::on_pool(|| cpu(eval, slots, &list, split))
        }
        (Backend::Gpu, rays) => gpu::first_hits(eval, slots, rays, split),
    }
}

/// Bytes a depth map holds per pixel from its search's start: the ray (40), its hit (24), its
/// height (8), its stack (48) and the first round's pieces of it (about 100 each for the
/// default 8).
pub(crate) const PER_PIXEL: u128 = 40 + 24 + 8 + 48 + 8 * 100;

/// A depth map: the surface f(x, y, z) = 0 seen from above, over `region` in x and y, searched
/// from z1 down to z0. Pixel (i, j) (row i from the top) is the vertical line through its
/// center (`x0 + (j + 1/2) dx`, `y1 - (i + 1/2) dy`, as doubles), searched by the ray rule to
/// `(z1 - z0) / steps`; its height is `z1 - t_lo` of the hit piece: no point of the surface on
/// that line lies above it.
#[derive(Clone, Debug, PartialEq)]
pub struct DepthMap {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `[x0, x1, y0, y1]`, finite, `x0 < x1`, `y0 < y1`, with finite spans `x1 - x0` and
    /// `y1 - y0` (a wider region's step overflows, and with it the pixels' centres).
    pub region: [f64; 4],
    /// `(z0, z1)`, finite, `z0 < z1`, with a finite span `z1 - z0` (the lines' length).
    pub zrange: (f64, f64),
    /// The resolution along each line: 1/steps of the z range.
    pub steps: usize,
}

impl DepthMap {
    /// Whether the options describe a map.
    fn check(&self) -> Result<(), Error> {
        let [x0, x1, y0, y1] = self.region;
        let (z0, z1) = self.zrange;
        let finite = [x0, x1, y0, y1, z0, z1].iter().all(|v| v.is_finite());
        let problem = if self.width == 0 || self.height == 0 {
            Some("the image needs at least one pixel".to_string())
        } else if !(finite && x0 < x1 && y0 < y1 && z0 < z1) {
            Some(format!(
                "region {x0:?},{x1:?},{y0:?},{y1:?} and heights {z0:?},{z1:?}: finite, with \
                 x0 < x1, y0 < y1 and z0 < z1"
            ))
        } else if !((x1 - x0).is_finite() && (y1 - y0).is_finite() && (z1 - z0).is_finite()) {
            Some(format!(
                "region {x0:?},{x1:?},{y0:?},{y1:?} and heights {z0:?},{z1:?}: each span \
                 (x1 - x0, y1 - y0, z1 - z0) must be at most the largest float, {:?}; make the \
                 map in parts",
                f64::MAX
            ))
        } else if self.steps == 0 {
            Some("steps must be at least 1".to_string())
        } else if u64::from(self.width) * u64::from(self.height) > 1 << 30 {
            Some(format!(
                "{}x{} pixels is more than 2^30; make the map in parts",
                self.width, self.height
            ))
        } else {
            None
        };
        match problem {
            Some(p) => Err(SearchError::Options(p).into()),
            None => Ok(()),
        }
    }

    /// f along the vertical lines: `f(u, v, z1 - t)` in the ray variables t, u and v, for f of
    /// x, y and z (z1 written exactly).
    pub fn along_rays(&self, f: &crate::Expression) -> Result<crate::Expression, Error> {
        self.check()?;
        if let Some(name) = f
            .vars()
            .iter()
            .find(|v| !["x", "y", "z"].contains(&v.as_str()))
        {
            return Err(SearchError::Options(format!(
                "the expression's variable '{name}' is not a coordinate: a depth map binds x, y \
                 and z only"
            ))
            .into());
        }
        let z1 = crate::syntax::number::hexf64(self.zrange.1);
        crate::Expression::parse(&format!(
            "let x = u; let y = v; let z = ({z1}) - t;\n{}",
            f.source()
        ))
    }

    /// The pixels' rays, row-major. [`SearchError::OutOfMemory`] when what the search holds
    /// for every pixel from its start (the ray, its stack, its hit and its height, about
    /// [`PER_PIXEL`] bytes) is more than the machine's memory, or the rays cannot be allocated.
    pub fn rays(&self) -> Result<Vec<Ray>, Error> {
        let grid = self.grid()?;
        let mut rays = Vec::new();
        rays.try_reserve_exact(grid.len())
            .map_err(|_| self.too_large())?;
        rays.extend((0..grid.len()).map(|p| grid.ray(p)));
        Ok(rays)
    }

    /// The first hit of every pixel's line, row-major: what [`first_hits`] gives for
    /// [`DepthMap::rays`], with `eval` the evaluator of [`DepthMap::along_rays`]. On a GPU the
    /// device makes the rays from the grid (nothing is packed or uploaded); on the CPU the
    /// rays are made on the host.
    pub fn first_hits(&self, eval: &Evaluator, split: u32) -> Result<Hits, Error> {
        hits_of(eval, Rays::Grid(self.grid()?), split)
    }

    /// The map's rays as a grid, after the checks of the options and of the memory a search
    /// of them holds.
    fn grid(&self) -> Result<Grid, Error> {
        self.check()?;
        let [x0, x1, y0, y1] = self.region;
        let pixels = self.width as u128 * self.height as u128; // at most 2^30 (check)
        if crate::gpu::machine_memory().is_some_and(|m| pixels * PER_PIXEL > m) {
            return Err(self.too_large().into());
        }
        let span = self.zrange.1 - self.zrange.0;
        Ok(Grid {
            width: self.width,
            height: self.height,
            x0,
            dx: (x1 - x0) / self.width as f64,
            y1,
            dy: (y1 - y0) / self.height as f64,
            t0: 0.0,
            t1: span,
            min_width: span / self.steps as f64,
        })
    }

    fn too_large(&self) -> SearchError {
        SearchError::OutOfMemory(format!(
            "a depth map of {}x{} pixels needs about {} bytes",
            self.width,
            self.height,
            self.width as u128 * self.height as u128 * PER_PIXEL
        ))
    }

    /// Each pixel's height, `z1 - t_lo` of its hit; NaN where the line misses the surface.
    pub fn heights(&self, hits: &[Option<(f64, f64)>]) -> Vec<f64> {
        hits.iter()
            .map(|h| h.map_or(f64::NAN, |(lo, _)| self.zrange.1 - lo))
            .collect()
    }
}

/// Where t, u and v go among the evaluator's variables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slots {
    pub t: Option<usize>,
    pub u: Option<usize>,
    pub v: Option<usize>,
    pub n_vars: usize,
}

pub(crate) fn slots(eval: &Evaluator) -> Result<Slots, Error> {
    let p = eval.program();
    if p.outputs.len() != 1 {
        return Err(SearchError::Outputs(p.outputs.len()).into());
    }
    let mut s = Slots {
        t: None,
        u: None,
        v: None,
        n_vars: p.var_names.len(),
    };
    for (k, name) in p.var_names.iter().enumerate() {
        match name.as_str() {
            "t" => s.t = Some(k),
            "u" => s.u = Some(k),
            "v" => s.v = Some(k),
            _ => {
                return Err(SearchError::Options(format!(
                    "the expression's variable '{name}' is not a ray variable: a ray search \
                     binds t, u and v only"
                ))
                .into())
            }
        }
    }
    Ok(s)
}

/// Piece `k` of `split` of `[lo, hi]`: the ends exact, the inner points rounded to nearest.
/// (The GPU kernel computes the same expression with `__dadd_rn`, `__dmul_rn`, ...)
pub(crate) fn piece(lo: f64, hi: f64, k: u32, split: u32) -> (f64, f64) {
    let at = |k: u32| {
        if k == 0 {
            lo
        } else if k == split {
            hi
        } else {
            lo + (hi - lo) * (k as f64 / split as f64)
        }
    };
    (at(k), at(k + 1))
}

/// Whether an enclosure may contain 0 (NaN, the empty set, cannot: f is undefined there).
pub(crate) fn may_vanish(lo: f64, hi: f64) -> bool {
    lo <= 0.0 && 0.0 <= hi
}

/// The search on the CPU, every unfinished ray one step per round.
pub(crate) fn cpu(eval: &Evaluator, s: Slots, rays: &[Ray], split: u32) -> Result<Hits, Error> {
    search(rays, split, |pieces, out| {
        let n = pieces.len();
        let mut inputs = vec![0.0; 2 * s.n_vars * n];
        for (slot, which) in [(s.t, 0), (s.u, 1), (s.v, 2)] {
            let Some(k) = slot else { continue };
            let (lo, hi) = inputs[2 * k * n..2 * (k + 1) * n].split_at_mut(n);
            lo.par_iter_mut()
                .zip(hi.par_iter_mut())
                .zip(pieces)
                .for_each(|((l, h), &(i, t))| {
                    (*l, *h) = match which {
                        0 => t,
                        1 => (rays[i].u, rays[i].u),
                        _ => (rays[i].v, rays[i].v),
                    }
                });
        }
        eval.eval_soa_into(&inputs, n, out)
    })
}

/// The search's rounds, every unfinished ray one step per round, with `eval` the enclosures
/// of a round's pieces (ray index, t segment): lo bounds into `out[..n]`, hi into `out[n..]`.
pub(crate) fn search(
    rays: &[Ray],
    split: u32,
    eval: impl Fn(&[(usize, (f64, f64))], &mut [f64]) -> Result<(), Error>,
) -> Result<Hits, Error> {
    let mut hits = vec![None; rays.len()];
    // Per unfinished ray: its index and its stack, front-most on top.
    let mut active: Vec<(usize, Vec<(f64, f64)>)> = rays
        .iter()
        .enumerate()
        .map(|(i, r)| (i, vec![(r.t0, r.t1)]))
        .collect();
    let per = split as usize;
    let mut boxes = 0u64;
    while !active.is_empty() {
        let pieces: Vec<(usize, (f64, f64))> = active
            .par_iter_mut()
            .flat_map_iter(|(i, stack)| {
                let (lo, hi) = stack.pop().expect("an active ray has a non-empty stack");
                let i = *i;
                (0..split).map(move |k| (i, piece(lo, hi, k, split)))
            })
            .collect();
        let n = pieces.len();
        let mut out = vec![0.0; 2 * n];
        eval(&pieces, &mut out)?;
        boxes += n as u64;
        let (done, next): (Vec<_>, Vec<_>) = active
            .into_par_iter()
            .enumerate()
            .filter_map(|(q, (i, mut stack))| {
                for k in (0..per).rev() {
                    let j = q * per + k;
                    if may_vanish(out[j], out[n + j]) {
                        stack.push(pieces[j].1);
                    }
                }
                match stack.last() {
                    None => None,
                    Some(&(lo, hi)) if hi - lo <= rays[i].min_width || hi <= lo => {
                        Some(rayon::iter::Either::Left((i, (lo, hi))))
                    }
                    Some(_) => Some(rayon::iter::Either::Right((i, stack))),
                }
            })
            .partition_map(|e| e);
        for (i, hit) in done {
            hits[i] = Some(hit);
        }
        active = next;
    }
    Ok(Hits {
        hits,
        boxes,
        finished_on_cpu: 0,
        device_seconds: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    /// Rays along the line (t, u) in the plane through the circle t^2 + u^2 = 1: the hit is
    /// the first crossing, sqrt(1 - u^2) in front when starting at -2, and no hit for |u| > 1.
    #[test]
    fn first_hits_are_the_first_roots() {
        let e = Expression::parse("t^2 + u^2 - 1").unwrap();
        for p in [Precision::F64, Precision::F32] {
            let eval = Evaluator::new(&e, p, BackendChoice::Cpu).unwrap();
            let rays: Vec<Ray> = (0..41)
                .map(|i| Ray {
                    u: -1.25 + i as f64 * 0.0625,
                    v: 0.0,
                    t0: -2.0,
                    t1: 2.0,
                    min_width: 4.0 / 1024.0,
                })
                .collect();
            let h = first_hits(&eval, &rays, 2).unwrap();
            for (r, hit) in rays.iter().zip(&h.hits) {
                let root = -(1.0 - r.u * r.u).sqrt();
                match hit {
                    None => assert!(r.u.abs() > 1.0, "u = {}: missed", r.u),
                    Some((lo, hi)) => {
                        assert!(hi - lo <= r.min_width);
                        // No root in front of the hit: the first root is not before it.
                        if r.u.abs() <= 1.0 {
                            assert!(root >= *lo - 1e-12, "u = {}: root {root} before {lo}", r.u);
                        }
                        assert!(r.u.abs() <= 1.0 + 1e-2, "u = {}: hit {lo}", r.u);
                    }
                }
            }
            assert!(h.boxes > 0);
        }
    }

    /// A depth map's search of its grid gives the hits of its rays' list; the rays are the
    /// pixels' centers, row-major from the top row; a span that overflows (the region's, whose
    /// step would be infinite and its pixels' centres with it, or the heights') is an error
    /// that says so, while the largest spans that do not overflow give finite rays.
    #[test]
    fn a_depth_maps_grid_gives_the_hits_of_its_rays() {
        let map = DepthMap {
            width: 7,
            height: 5,
            region: [-1.0, 1.0, -0.5, 1.5],
            zrange: (-1.0, 1.0),
            steps: 64,
        };
        let rays = map.rays().unwrap();
        // Pixel (1, 2): x = -1 + 2.5 * 2/7, y = 1.5 - 1.5 * 2/5 (within rounding).
        let r = rays[7 + 2];
        assert!((r.u - (-1.0 + 5.0 / 7.0)).abs() < 1e-15 && (r.v - 0.9).abs() < 1e-15);
        assert_eq!((r.t0, r.t1, r.min_width), (0.0, 2.0, 2.0 / 64.0));
        let f = Expression::parse("x^2 + y^2 + z^2 - 0.9").unwrap();
        let eval = Evaluator::new(
            &map.along_rays(&f).unwrap(),
            Precision::F64,
            BackendChoice::Cpu,
        )
        .unwrap();
        let (a, b) = (
            first_hits(&eval, &rays, 4).unwrap(),
            map.first_hits(&eval, 4).unwrap(),
        );
        assert_eq!(a, b);
        assert!(a.hits.iter().any(|h| h.is_some()) && a.hits.iter().any(|h| h.is_none()));
        // Against the sphere's exact roots (not the search's own rays): pixel (i, j)'s line
        // x = -1 + (j + 1/2) 2/7, y = 1.5 - (i + 1/2) 2/5, z = 1 - t meets it first at
        // t* = 1 - sqrt(0.9 - x^2 - y^2) where x^2 + y^2 <= 0.9. z^2 of a piece is exact up
        // to rounding and x, y are points, so the hit piece holds t* and a line that misses
        // the sphere by more than rounding has no hit.
        for (p, hit) in a.hits.iter().enumerate() {
            let (i, j) = ((p / 7) as f64, (p % 7) as f64);
            let (x, y) = (-1.0 + (j + 0.5) * 2.0 / 7.0, 1.5 - (i + 0.5) * 2.0 / 5.0);
            assert!(
                (rays[p].u - x).abs() < 1e-15 && (rays[p].v - y).abs() < 1e-15,
                "{p}"
            );
            let r2 = x * x + y * y;
            match hit {
                Some((lo, hi)) if r2 < 0.9 - 1e-9 => {
                    let t = 1.0 - (0.9 - r2).sqrt();
                    assert!(
                        *lo - 1e-12 <= t && t <= *hi + 1e-12,
                        "{p}: {t} in {lo}..{hi}"
                    );
                    assert!(hi - lo <= 2.0 / 64.0, "{p}: {lo}..{hi}");
                }
                None if r2 > 0.9 + 1e-9 => {}
                _ => panic!("pixel {p} (x^2 + y^2 = {r2}): {hit:?}"),
            }
        }
        let max = f64::MAX;
        for (region, zrange) in [
            ([-max, max, -0.5, 1.5], (-1.0, 1.0)),
            ([-1.0, 1.0, -max, max], (-1.0, 1.0)),
            ([-1.0, 1.0, -0.5, 1.5], (-max, max)),
        ] {
            let far = DepthMap {
                region,
                zrange,
                ..map
            };
            let e = far.first_hits(&eval, 4).unwrap_err().to_string();
            assert!(e.contains("span"), "{region:?} {zrange:?}: {e}");
            assert_eq!(far.rays().unwrap_err().to_string(), e);
        }
        let wide = DepthMap {
            region: [-max / 2.0, max / 2.0, 0.0, max],
            zrange: (-max / 2.0, max / 2.0),
            ..map
        };
        let rays = wide.rays().unwrap();
        assert!(rays.iter().all(|r| [r.u, r.v, r.t0, r.t1, r.min_width]
            .iter()
            .all(|v| v.is_finite())));
        assert!(rays[0].u < -max / 3.0 && rays[6].u > max / 3.0);
    }

    #[test]
    fn bad_rays_and_expressions_are_errors() {
        let eval = |text: &str| {
            Evaluator::new(
                &Expression::parse(text).unwrap(),
                Precision::F64,
                BackendChoice::Cpu,
            )
            .unwrap()
        };
        let ray = Ray {
            u: 0.0,
            v: 0.0,
            t0: 0.0,
            t1: 1.0,
            min_width: 0.1,
        };
        assert!(first_hits(&eval("t + x"), &[ray], 2).is_err());
        assert!(first_hits(&eval("t"), &[ray], 1).is_err());
        let back = Ray { t0: 2.0, ..ray };
        assert!(first_hits(&eval("t"), &[back], 2).is_err());
    }
}
