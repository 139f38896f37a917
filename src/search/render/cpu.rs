//! The search on the CPU: each round's boxes in host vectors, evaluated by the CPU evaluator,
//! classified and split in parallel (rayon). The reference the GPU implementation is tested
//! against, bit for bit.

use rayon::prelude::*;

use super::{classify, Plan, Rendered, Round2, BOUNDARY, UNSET};
use crate::{Error, Evaluator};

/// [`super::render`] on the CPU.
pub(crate) fn render(eval: &Evaluator, plan: &Plan) -> Result<Rendered, Error> {
    let levels = &plan.levels;
    let mut classes: Vec<Vec<u8>> = level_classes(plan)?;
    let mut rounds = Vec::with_capacity(levels.len());
    let first = &levels[0];
    let mut live: Vec<(u32, u32)> = (0..first.rows)
        .flat_map(|r| (0..first.cols).map(move |c| (r, c)))
        .collect();
    for (l, grid) in levels.iter().enumerate() {
        let n = live.len();
        let mut round = Round2 {
            tile: grid.tile,
            boxes: n as u64,
            ..Round2::default()
        };
        if n > 0 {
            let found = classify_tiles(eval, plan, l, &live)?;
            let cls = &mut classes[l];
            for (&(r, c), &k) in live.iter().zip(&found) {
                cls[(r * grid.cols + c) as usize] = k;
                match k {
                    super::INSIDE => round.inside += 1,
                    super::OUTSIDE => round.outside += 1,
                    _ => round.boundary += 1,
                }
            }
            live = match levels.get(l + 1) {
                Some(next) => children(&live, &found, grid.tile / next.tile, next),
                None => Vec::new(),
            };
        }
        rounds.push(round);
    }
    Ok(Rendered {
        width: plan.width,
        height: plan.height,
        classes: compose(plan, &classes)?,
        rounds,
    })
}

/// The class of each tile of level `l` in `live`.
fn classify_tiles(
    eval: &Evaluator,
    plan: &Plan,
    l: usize,
    live: &[(u32, u32)],
) -> Result<Vec<u8>, Error> {
    let n = live.len();
    let boxes: Vec<[f64; 4]> = live
        .par_iter()
        .map(|&(r, c)| plan.tile_box(l, r, c))
        .collect();
    let mut inputs = vec![0.0; 2 * plan.n_vars * n];
    for (var, first) in [(plan.var_x, 0), (plan.var_y, 2)] {
        let Some(k) = var else { continue };
        let (lo, hi) = inputs[2 * k * n..2 * (k + 1) * n].split_at_mut(n);
        lo.par_iter_mut()
            .zip(hi.par_iter_mut())
            .zip(&boxes)
            .for_each(|((lo, hi), b)| (*lo, *hi) = (b[first], b[first + 1]));
    }
    let mut out = vec![0.0; 2 * n];
    eval.eval_soa_into(&inputs, n, &mut out)?;
    let (lo, hi) = out.split_at(n);
    Ok(lo
        .par_iter()
        .zip(hi)
        .map(|(&lo, &hi)| classify(lo, hi))
        .collect())
}

/// The next level's tiles: the `k x k` children of each boundary tile, clipped to the image.
fn children(live: &[(u32, u32)], found: &[u8], k: u32, next: &super::LevelGrid) -> Vec<(u32, u32)> {
    live.par_iter()
        .zip(found)
        .filter(|(_, &c)| c == BOUNDARY)
        .flat_map_iter(|(&(r, c), _)| {
            let rows = k.min(next.rows - r * k);
            let cols = k.min(next.cols - c * k);
            (0..rows).flat_map(move |a| (0..cols).map(move |b| (r * k + a, c * k + b)))
        })
        .collect()
}

/// Every level's class array, not yet evaluated (allocated fallibly: the last level has a
/// byte per pixel).
pub(crate) fn level_classes(plan: &Plan) -> Result<Vec<Vec<u8>>, Error> {
    plan.levels
        .iter()
        .map(|g| {
            super::filled(
                g.rows as usize * g.cols as usize,
                UNSET,
                &format!(
                    "a level of {}-pixel tiles of a {}x{} image",
                    g.tile, plan.width, plan.height
                ),
            )
            .map_err(Error::from)
        })
        .collect()
}

/// Each pixel's class: that of the coarsest tile over it that was decided, else boundary.
pub(crate) fn compose(plan: &Plan, classes: &[Vec<u8>]) -> Result<Vec<u8>, Error> {
    let w = plan.width as usize;
    let mut image = super::filled(
        w * plan.height as usize,
        BOUNDARY,
        &format!("a {}x{} image", plan.width, plan.height),
    )?;
    // Each row walks the levels by spans: a tile of the row's level decided over the span
    // fills it, a boundary tile hands its part of the span to the next level, an unset one
    // leaves it boundary — the first level that is not boundary decides, as per pixel, with
    // one look-up per tile instead of one per pixel and level (a per-pixel walk was 8 % of a
    // 1-thread Prospero render).
    let levels = classes.len().min(plan.levels.len());
    fn span(
        plan: &Plan,
        classes: &[Vec<u8>],
        levels: usize,
        (i, level): (u32, usize),
        (from, to): (usize, usize),
        row: &mut [u8],
    ) {
        let g = &plan.levels[level];
        let (base, t) = ((i / g.tile * g.cols) as usize, g.tile as usize);
        let tiles = &classes[level][base..];
        if t == 1 {
            // Pixels: each its own class (a loop the compiler vectorizes, no fill calls).
            for (px, &k) in row[from..to].iter_mut().zip(&tiles[from..to]) {
                if k != BOUNDARY && k != UNSET {
                    *px = k;
                }
            }
            return;
        }
        let (mut j, mut c) = (from, from / t);
        while j < to {
            let end = ((c + 1) * t).min(to);
            match tiles[c] {
                BOUNDARY if level + 1 < levels => {
                    span(plan, classes, levels, (i, level + 1), (j, end), row)
                }
                BOUNDARY | UNSET => {}
                k => row[j..end].fill(k),
            }
            (j, c) = (end, c + 1);
        }
    }
    if levels > 0 {
        image
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(i, row)| span(plan, classes, levels, (i as u32, 0), (0, w), row));
    }
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::super::{render, RenderOptions, INSIDE, OUTSIDE};
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    fn cpu(text: &str, p: Precision) -> Evaluator {
        Evaluator::new(&Expression::parse(text).unwrap(), p, BackendChoice::Cpu).unwrap()
    }

    /// Hierarchical classification against per-pixel brute force (tiles [1]): a pixel that
    /// brute force proves gets the same class, and no pixel gets the opposite proven class.
    #[test]
    fn subdivision_agrees_with_brute_force() {
        for p in [Precision::F64, Precision::F32] {
            for text in [
                "x^2 + y^2 - 0.5",
                "max(abs(x) - 0.6, abs(y) - 0.3)",
                "sin(8*x) * cos(5*y) - 0.2*x",
                "y - x^3 + 0.5*x",
            ] {
                let eval = cpu(text, p);
                let (w, h) = (77, 50); // not multiples of the tile sizes
                let region = [-1.3, 1.1, -0.9, 1.0];
                let brute = render(
                    &eval,
                    &RenderOptions {
                        tiles: vec![1],
                        ..RenderOptions::new(w, h, region)
                    },
                )
                .unwrap();
                for tiles in [vec![64, 8, 1], vec![16, 4, 2, 1], vec![32, 1]] {
                    let opts = RenderOptions {
                        tiles: tiles.clone(),
                        ..RenderOptions::new(w, h, region)
                    };
                    let tree = render(&eval, &opts).unwrap();
                    for (i, (&b, &t)) in brute.classes.iter().zip(&tree.classes).enumerate() {
                        let at = format!("{text} {p:?} {tiles:?} pixel {i}");
                        if b != BOUNDARY {
                            assert_eq!(t, b, "{at}");
                        }
                        assert!(
                            !(t == INSIDE && b == OUTSIDE || t == OUTSIDE && b == INSIDE),
                            "{at}"
                        );
                    }
                    let total: u64 = tree
                        .rounds
                        .iter()
                        .map(|r| r.inside + r.outside + r.boundary)
                        .sum();
                    assert_eq!(total, tree.boxes(), "{text}: every box classified once");
                }
                assert!(
                    brute.classes.contains(&INSIDE) && brute.classes.contains(&OUTSIDE),
                    "{text}"
                );
            }
        }
    }

    /// The disk x^2 + y^2 < r^2, checked pixel by pixel against exact rational arithmetic on
    /// the real pixel: a proven class must be true of every point of the pixel.
    #[test]
    fn classes_are_true_of_the_real_pixels() {
        use num_rational::BigRational;
        let q = |x: f64| BigRational::from_float(x).unwrap();
        let eval = cpu("x^2 + y^2 - 0.3", Precision::F64);
        let (w, h) = (40u32, 30u32);
        let region = [-0.8, 0.9, -0.7, 0.6];
        let image = render(
            &eval,
            &RenderOptions {
                tiles: vec![8, 2, 1],
                ..RenderOptions::new(w, h, region)
            },
        )
        .unwrap();
        let r2 = q(0.3);
        let dx = (q(region[1]) - q(region[0])) / q(w as f64);
        let dy = (q(region[3]) - q(region[2])) / q(h as f64);
        for i in 0..h {
            for j in 0..w {
                let xs = [
                    q(region[0]) + q(j as f64) * &dx,
                    q(region[0]) + q((j + 1) as f64) * &dx,
                ];
                let ys = [
                    q(region[3]) - q((i + 1) as f64) * &dy,
                    q(region[3]) - q(i as f64) * &dy,
                ];
                // Extremes of x^2 + y^2 on the pixel.
                let sq_max = |a: &[BigRational; 2]| {
                    let (u, v) = (&a[0] * &a[0], &a[1] * &a[1]);
                    if u > v {
                        u
                    } else {
                        v
                    }
                };
                let sq_min = |a: &[BigRational; 2]| {
                    if a[0] <= q(0.0) && a[1] >= q(0.0) {
                        q(0.0)
                    } else {
                        let (u, v) = (&a[0] * &a[0], &a[1] * &a[1]);
                        if u < v {
                            u
                        } else {
                            v
                        }
                    }
                };
                let lo = sq_min(&xs) + sq_min(&ys);
                let hi = sq_max(&xs) + sq_max(&ys);
                match image.classes[(i * w + j) as usize] {
                    INSIDE => assert!(hi < r2, "pixel ({i}, {j}) is not inside"),
                    OUTSIDE => assert!(lo > r2, "pixel ({i}, {j}) is not outside"),
                    _ => {}
                }
            }
        }
        assert!(image.classes.contains(&INSIDE) && image.classes.contains(&OUTSIDE));
    }
}
