//! The tape render on the GPU: the interpreter of [`crate::search::tape`] in CUDA, with the
//! pruning done on the device, so that no tape crosses between host and device between rounds.
//!
//! A round is two launches. `ivjit_tape_eval` runs one thread per tile: the tile's box (the
//! rounding of `Axes::tile_box`), its tape (work item: row, column, offset and length of the tape
//! in the round's pool), the class, and with a level after this one the `min`/`max` outcomes
//! (`choices[k * n + t]`) and the tile appended to the boundary list. On a plan's first frame the
//! host reads the counters, sizes the next pool (and on later frames of the same plan takes the
//! first frame's sizes as capacities and reads nothing before the end: the kernels read the counts
//! on the device, never write past a capacity, and flag a short one, which sends the frame to a
//! reading pass), and `ivjit_tape_prune_warp` prunes each boundary tile's tape with a warp
//! ([`crate::search::tape::Tape::pruned`]'s steps), writing the pruned tape into the next pool and
//! the tile's children (with that tape) into the next work list. The children of one tile are
//! consecutive, so a block of them reads one tape. The first level, where every tile runs the whole
//! tape, has its own pair of kernels (`ivjit_tape_root_*`): one block per tile, depth by depth.
//!
//! Slots live in the thread's local memory (`Iv s[NSLOTS]`, NSLOTS the tape's slot count
//! rounded up to 32; one compiled module per precision and NSLOTS, kept like every search
//! kernel). The operations are generated from their lowering (`lower::interpreted`), as the
//! CPU interpreter's are, with correctly rounded intrinsics (`__dadd_rd`, ...): the same bits.

use crate::search::kernels;
use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use crate::gpu::{self, Context, GpuError};
use crate::search::render::{self, UNSET};
use crate::search::tape::{code, Bound, Tape, TapeRound};
use crate::search::voxels::Lend;
use crate::search::{Plan, Round2};
use crate::Precision;

struct Kernels {
    eval: CudaFunction,
    root_eval: CudaFunction,
    root_prune: CudaFunction,
    prune_warp: CudaFunction,
    heights: CudaFunction,
    normals: CudaFunction,
}

/// The CUDA C source of the interpreter for precision `p`, `nslots` slots per thread and
/// operations run by their lowering with the derivative rules `rules` (the tape's
/// [`super::Extended`] table: device functions `ivjit_tape_op_<k>(const T* in, T* out)`, the
/// PTX emitter's, linked in).
pub(crate) fn source(p: Precision, nslots: usize, rules: &[super::gradient::Rule]) -> String {
    let prelude = kernels::prelude(p);
    // The operation codes as the CUDA source names them: OP_CONST, OP_VAR, ...
    let codes: String = [
        ("CONST", code::CONST),
        ("VAR", code::VAR),
        ("NEG", code::NEG),
        ("ADD", code::ADD),
        ("SUB", code::SUB),
        ("MUL", code::MUL),
        ("SQR", code::SQR),
        ("SQRT", code::SQRT),
        ("ABS", code::ABS),
        ("MIN", code::MIN),
        ("MAX", code::MAX),
        ("A_MAY_BE_EMPTY", code::A_MAY_BE_EMPTY),
        ("B_MAY_BE_EMPTY", code::B_MAY_BE_EMPTY),
        ("SIGN_ONLY", code::SIGN_ONLY),
        ("EXT", code::EXT),
        ("BINARY", code::BINARY),
    ]
    .iter()
    .map(|(name, v)| format!("#define OP_{name} {v}\n"))
    .collect();
    let ops = crate::lower::interpreted::operations(p, crate::scalar::emit::Language::CudaC);
    format!(
        "{prelude}#define NSLOTS {nslots}\n#define OUT_SLOT {}\n{codes}struct Iv {{ T lo, hi; }};\n{ops}{}{}",
        crate::search::tape::OUT,
        extended_calls(rules),
        include_str!("tape.cu")
    )
}

/// The name of the device function of the tape's `k`-th extended operation.
fn extended_name(k: usize) -> String {
    format!("ivjit_tape_op_{k}")
}

/// `op_ext(kind, a, b)`: the call of extended operation `kind - OP_EXT` (`#define EXTENDED`,
/// the count, guards its use in tape.cu, so a tape without any compiles as before), and
/// `ext_rule(kind)`: its derivative rule (`gradient::Rule`'s number).
fn extended_calls(rules: &[super::gradient::Rule]) -> String {
    let n = rules.len();
    let mut s = format!("#define EXTENDED {n}\n");
    if n == 0 {
        return s;
    }
    for k in 0..n {
        let name = extended_name(k);
        s.push_str(&format!(
            "extern \"C\" __device__ void {name}(const T* in, T* out);\n"
        ));
    }
    s.push_str(
        "__device__ Iv op_ext(u32 kind, Iv a, Iv b)\n{\n    \
         T in[4] = { a.lo, a.hi, b.lo, b.hi }, out[2];\n    switch (kind - OP_EXT) {\n",
    );
    for k in 0..n {
        let name = extended_name(k);
        s.push_str(&format!("    case {k}: {name}(in, out); break;\n"));
    }
    // No tape holds another code; were one to, the entire line encloses anything.
    s.push_str(
        "    default: out[1] = (T)__int_as_float(0x7f800000); out[0] = -out[1];\n    }\n    \
         return Iv{ out[0], out[1] };\n}\n",
    );
    s.push_str("__device__ u32 ext_rule(u32 kind)\n{\n    switch (kind - OP_EXT) {\n");
    for (k, &r) in rules.iter().enumerate() {
        s.push_str(&format!("    case {k}: return {};\n", r as u32));
    }
    s.push_str("    default: return 0;\n    }\n}\n");
    s
}

/// A launch of `n` threads in blocks of `block`. A tile's thread runs a whole tape (or prunes
/// one) alone; few such threads go in small blocks, spread over many SMs, where each SM's L1
/// holds their slots and scratch.
fn spread(n: usize, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(block as usize).clamp(1, 1 << 24) as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// With `IVJIT_TAPE_PROFILE` set, the device time of each step (the stream synchronized
/// after it), printed on stderr at the end of a render.
struct Profile {
    on: bool,
    last: std::time::Instant,
    steps: Vec<(String, f64)>,
}

impl Profile {
    fn new() -> Profile {
        Profile {
            on: crate::gpu::env::tape_profile(),
            last: std::time::Instant::now(),
            steps: Vec::new(),
        }
    }

    fn mark(&mut self, stream: &CudaStream, what: String) -> Result<(), GpuError> {
        if self.on {
            stream
                .synchronize()
                .during("synchronizing for the profile")?;
            let now = std::time::Instant::now();
            self.steps
                .push((what, (now - self.last).as_secs_f64() * 1e3));
            self.last = now;
        }
        Ok(())
    }

    fn print(&self) {
        if self.on {
            let all: Vec<String> = self
                .steps
                .iter()
                .map(|(w, t)| format!("{w} {t:.3}"))
                .collect();
            eprintln!("tape render profile (ms): {}", all.join(", "));
        }
    }
}

/// The interpreter's slot count for a tape of `slots` slots: rounded up to 32, so that few
/// variants are compiled.
pub(crate) fn slots_of(slots: usize) -> usize {
    slots.max(1).div_ceil(32) * 32
}

/// The interpreter for the device of `ctx`, precision and slot count (the one search-module
/// loader keeps it).
fn kernels(
    ctx: &Arc<CudaContext>,
    ordinal: usize,
    p: Precision,
    nslots: usize,
    extended: &super::Extended,
) -> Result<Arc<Kernels>, GpuError> {
    let programs = extended.programs(p);
    let k = gpu::search_module::load(
        ctx,
        ordinal,
        gpu::search_module::SearchModule {
            name: "tape",
            cuda: source(p, nslots, &extended.rules()),
            linked: programs
                .iter()
                .enumerate()
                .map(|(k, program)| (program, extended_name(k)))
                .collect(),
            kernels: &[
                "ivjit_tape_eval",
                "ivjit_tape_root_eval",
                "ivjit_tape_root_prune",
                "ivjit_tape_prune_warp",
                "ivjit_tape_heights",
                "ivjit_tape_normals",
            ],
        },
    )?;
    Ok(Arc::new(Kernels {
        eval: k[0].clone(),
        root_eval: k[1].clone(),
        root_prune: k[2].clone(),
        prune_warp: k[3].clone(),
        heights: k[4].clone(),
        normals: k[5].clone(),
    }))
}

/// The z axis's arguments of the interpreter's kernels: its four constants (`z1 / D` and
/// `z0 / D` rounded down, then up: [`crate::search::render::ZAxis`]'s y constants) and the
/// depth D (0 for a 2-D plan: no layers).
fn z_args(plan: &Plan) -> ([f64; 4], u32) {
    match plan.z {
        Some(z) => {
            let c = z.axes.constants();
            ([c[4], c[5], c[6], c[7]], z.depth)
        }
        None => ([0.0; 4], 0),
    }
}

/// Pushes [`z_args`] in the kernels' order.
fn push_z<'a>(b: &mut cudarc::driver::LaunchArgs<'a>, zc: &'a [f64; 4], depth: &'a u32) {
    use cudarc::driver::PushKernelArg;
    b.arg(&zc[0]).arg(&zc[1]).arg(&zc[2]).arg(&zc[3]).arg(depth);
}

/// A tape ready to render frames on the GPUs (`IVJIT_DEVICES`, else every visible one): on
/// the first, the interpreter loaded and the tape, its constants and its depth order uploaded
/// once; on the others, the same at the first frame large enough to be split among them.
pub(crate) enum DeviceTape {
    F64(Shards<f64>),
    F32(Shards<f32>),
}

impl DeviceTape {
    pub(crate) fn new(tape: &Tape, p: Precision) -> Result<DeviceTape, GpuError> {
        Ok(match p {
            Precision::F64 => DeviceTape::F64(Shards::new(tape, p)?),
            Precision::F32 => DeviceTape::F32(Shards::new(tape, p)?),
        })
    }

    /// The voxel search of a 3-D plan, lent to `f`: each column's height and with `normals`
    /// its certified unit normal (three numbers, NaN where none); returns the rounds and their
    /// mean tape lengths (one device: a voxel frame is not split).
    pub(crate) fn voxels(
        &self,
        plan: &Plan,
        normals: bool,
        f: &mut Lend<'_>,
    ) -> Result<(Vec<Round2>, Vec<TapeRound>), GpuError> {
        match self {
            DeviceTape::F64(d) => d.first.voxels(plan, normals, f),
            DeviceTape::F32(d) => d.first.voxels(plan, normals, f),
        }
    }

    /// Every voxel's class of the 3-D `plan` (no occlusion): each level's tiles' classes by
    /// `(layer, row, column)`, `UNSET` where not evaluated; the rounds and their mean tape
    /// lengths (see [`crate::search::voxels::VoxelClasses`]).
    pub(crate) fn voxel_classes(
        &self,
        plan: &Plan,
    ) -> Result<crate::search::voxels::LevelClasses, GpuError> {
        match self {
            DeviceTape::F64(d) => d.first.voxel_classes(plan),
            DeviceTape::F32(d) => d.first.voxel_classes(plan),
        }
    }

    /// One frame: the search of `plan` with the tape, the image handed to `f` in the
    /// page-locked memory it came back to; the rounds and their mean tape lengths.
    pub(crate) fn render_with(
        &self,
        plan: &Plan,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(Vec<Round2>, Vec<TapeRound>), GpuError> {
        match self {
            DeviceTape::F64(d) => d.render(plan, f),
            DeviceTape::F32(d) => d.render(plan, f),
        }
    }
}

/// Images of more pixels than this (width x height) have their frames split among several
/// GPUs: up to 2048² a frame's fixed costs (a thread per GPU, a synchronization each, levels
/// whose time is one thread's chain, not their work) outweighed the parts' savings. Measured
/// on two H200s (docs/render.md, "Several GPUs": Prospero at 2048², 0.98 ms on one GPU and
/// on two; at 4096², 1.26 → 1.08 ms).
pub(crate) const SPLIT_PIXELS: u64 = 2048 * 2048;

/// Which of a frame's first-level rows a renderer runs: those `r` with `r % count == index`
/// (interleaved, so that each GPU gets rows from all over the image). Everything below the
/// first level follows from its tiles, so the parts' searches are independent; each
/// composes the whole image from its classes and copies back only its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    index: usize,
    count: usize,
}

impl Part {
    const WHOLE: Part = Part { index: 0, count: 1 };

    fn owns(&self, row: u32) -> bool {
        row as usize % self.count == self.index
    }
}

/// One prepared tape per part of a frame: the first on the first device, the others (made at
/// the first split frame) round-robin on the devices, and the page-locked image they copy
/// their rows into.
pub(crate) struct Shards<T> {
    first: Prepared<T>,
    devices: Vec<usize>,
    tape: Tape,
    precision: Precision,
    split: std::sync::Mutex<Split<T>>,
}

/// What a split frame keeps for the next: the other parts' renderers and the image.
struct Split<T> {
    others: Vec<Prepared<T>>,
    image: Option<cudarc::driver::PinnedHostSlice<u8>>,
}

impl<T> Shards<T>
where
    T: Bound + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    fn new(tape: &Tape, p: Precision) -> Result<Shards<T>, GpuError> {
        let devices = gpu::default_devices()?;
        Ok(Shards {
            first: Prepared::new(tape, p, devices[0])?,
            devices,
            tape: tape.clone(),
            precision: p,
            split: std::sync::Mutex::new(Split {
                others: Vec::new(),
                image: None,
            }),
        })
    }

    /// How many parts a frame of `plan` is split into: one per device for an image of more
    /// than [`SPLIT_PIXELS`] (at most one per first-level row), else one
    /// (`IVJIT_SEARCH_PARTS` sets the count, also above the devices' on one GPU, for tests).
    fn parts(&self, plan: &Plan) -> usize {
        let rows = plan.levels[0].rows as usize;
        let parts = match crate::gpu::env::search_parts() {
            Some(k) => k,
            None if plan.width as u64 * plan.height as u64 > SPLIT_PIXELS => self.devices.len(),
            None => 1,
        };
        parts.clamp(1, rows.max(1))
    }

    fn render(
        &self,
        plan: &Plan,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(Vec<Round2>, Vec<TapeRound>), GpuError> {
        let parts = self.parts(plan);
        if parts == 1 {
            return self.first.render(plan, f);
        }
        let mut split = self.split.lock().unwrap_or_else(|e| e.into_inner());
        let split = &mut *split;
        while split.others.len() + 1 < parts {
            let ordinal = self.devices[(split.others.len() + 1) % self.devices.len()];
            split
                .others
                .push(Prepared::new(&self.tape, self.precision, ordinal)?);
        }
        let pixels = plan.width as usize * plan.height as usize;
        let image = match split.image.take() {
            Some(h) if h.len() >= pixels => h,
            old => {
                drop(old);
                self.first
                    .ctx
                    .bind_to_thread()
                    .during("binding the device's context")?;
                // SAFETY: every byte read is written by a part's copy first. Portable: every
                // device's context copies into it as page-locked memory.
                unsafe {
                    self.first.ctx.alloc_pinned_with_flags::<u8>(
                        pixels,
                        cudarc::driver::sys::CU_MEMHOSTALLOC_PORTABLE,
                    )
                }
                .during("allocating page-locked memory for the image")?
            }
        };
        let mut image = image;
        let counted = {
            let host = &mut image.as_mut_slice().during("writing the image")?[..pixels];
            // Each first-level row's pixel rows, handed to the part that renders it.
            let band = plan.levels[0].tile as usize * plan.width as usize;
            let mut bands: Vec<Vec<(usize, &mut [u8])>> = (0..parts).map(|_| Vec::new()).collect();
            for (r, rows) in host.chunks_mut(band.max(1)).enumerate() {
                bands[r % parts].push((r * band, rows));
            }
            let mut bands = bands.into_iter();
            let mine = bands.next().expect("a part");
            std::thread::scope(|s| {
                let others: Vec<_> = split
                    .others
                    .iter()
                    .take(parts - 1)
                    .zip(bands)
                    .enumerate()
                    .map(|(i, (prepared, b))| {
                        let part = Part {
                            index: i + 1,
                            count: parts,
                        };
                        s.spawn(move || prepared.render_part(plan, part, b))
                    })
                    .collect();
                let part = Part {
                    index: 0,
                    count: parts,
                };
                let mut all = vec![self.first.render_part(plan, part, mine)];
                all.extend(others.into_iter().map(|h| match h.join() {
                    Ok(r) => r,
                    Err(e) => std::panic::resume_unwind(e),
                }));
                all.into_iter().collect::<Result<Vec<_>, GpuError>>()
            })?
        };
        // The parts' counters, level by level, added.
        let mut sum = counted[0].clone();
        for c in &counted[1..] {
            for (a, b) in sum.iter_mut().zip(c) {
                for k in 0..4 {
                    a.0[k] += b.0[k];
                }
                a.1 += b.1;
            }
        }
        let out = rounds_of(plan, &sum);
        f(&image.as_slice().during("reading the image")?[..pixels]);
        split.image = Some(image);
        Ok(out)
    }
}

pub(crate) struct Prepared<T> {
    ctx: Arc<CudaContext>,
    k: Arc<Kernels>,
    compose: CudaFunction,
    consts: CudaSlice<T>,
    pool: CudaSlice<u64>,
    args: CudaSlice<u32>,
    /// The first level's records: per instruction in depth order, its index, operation, SSA
    /// operands and choice index (four words; `by_depth` in tape.cu).
    recs: CudaSlice<u32>,
    /// Where each depth's records start, and the depths.
    starts: CudaSlice<u32>,
    nlv: u32,
    /// Whether the first level runs depth by depth, one block per tile.
    root: bool,
    root_eval_bytes: usize,
    root_prune_bytes: usize,
    /// The most dynamic shared memory a block may have (the warp pruning's limit).
    shared_max: usize,
    len: usize,
    choices: usize,
    nslots: usize,
    /// What the next frame reuses from this one (one frame at a time).
    kept: std::sync::Mutex<Option<Kept>>,
}

/// What a frame keeps for the next: its stream, every device buffer (grown when a frame needs
/// more, never shrunk), the pinned host memory the counters and the image come back through.
/// Allocating them per frame cost 0.05-0.1 ms a level and a stream (run 35, an H200).
struct Kept {
    stream: Arc<CudaStream>,
    classes: Option<CudaSlice<u8>>,
    /// A 3-D frame's column heights, level by level, and its depth map.
    heights: Option<CudaSlice<u32>>,
    depth_map: Option<CudaSlice<u32>>,
    /// The levels' table of the depth map's composition (tile, columns, offset per level) as
    /// uploaded.
    level_table: Option<(Vec<u32>, CudaSlice<u32>)>,
    /// Whether the next 3-D frame computes normals, where they go (three numbers per
    /// column), and the page-locked memory the depth map and the normals are lent from.
    normals: bool,
    /// Whether the next 3-D frame marks every voxel's class (no heights, no occlusion) into
    /// `classes`, level by level.
    voxel_classes: bool,
    normals_dev: Option<CudaSlice<f64>>,
    heights_host: Option<cudarc::driver::PinnedHostSlice<u32>>,
    normals_host: Option<cudarc::driver::PinnedHostSlice<f64>>,
    /// The first level's work items, for the level grid, tape length and part they were made
    /// for.
    first: Option<(FirstKey, CudaSlice<u32>)>,
    levels: Vec<LevelKept>,
    image: crate::search::render::gpu::ImageBuffers,
    /// Every level's counters ([`COUNTER_WORDS`] words a level, [`Kept::counter`]), in one
    /// buffer: one clear a frame, and one copy back where the frame reads nothing before its
    /// end (each had been two small operations per level, which a frame's timeline pays).
    counters: Option<CudaSlice<u32>>,
    /// Their host copy (page-locked).
    counters_host: Option<cudarc::driver::PinnedHostSlice<u32>>,
    /// The device address of `counters` (set where a frame clears them), kept rather than
    /// asked of the slice at each use: each `device_ptr` call queues a wait on its last write.
    counters_at: u64,
    /// The sizes the last frame read level by level, for the plan it rendered: a frame of
    /// the same plan takes them as capacities and reads no counter before its end.
    caps: Option<(Vec<u64>, Vec<Cap>)>,
}

/// What the first level's work items depend on: its grid's rows, columns and layers, the
/// tape's length, the part.
type FirstKey = (u32, u32, u32, usize, Part);

/// What a level of a frame needed: its work items, its longest tape and most choices (per
/// tape), and its boundary tiles.
#[derive(Clone, Copy, Debug)]
struct Cap {
    n: usize,
    stride: usize,
    choices: usize,
    nb: usize,
}

/// What a plan's sizes depend on (with the tape, fixed per renderer): the image, the levels'
/// grids and the axes' rounded constants, as bits.
fn plan_key(plan: &Plan) -> Vec<u64> {
    let a = plan.axes;
    let mut key = vec![plan.width as u64, plan.height as u64];
    key.extend(plan.levels.iter().flat_map(|g| {
        [
            (g.tile as u64) << 40 | (g.cols as u64) << 20 | g.rows as u64,
            g.layers as u64,
        ]
    }));
    key.extend(a.constants().map(f64::to_bits));
    let (zc, depth) = z_args(plan);
    key.extend(zc.map(f64::to_bits));
    key.push(depth as u64);
    key
}

/// One level's buffers: its own ([`LevelBuffers`]) and the pruned tapes and work items it
/// writes for the next level.
#[derive(Default)]
struct LevelKept {
    choices: Option<CudaSlice<u8>>,
    n_choices: Option<CudaSlice<u32>>,
    boundary: Option<CudaSlice<u32>>,
    next_pool: Option<CudaSlice<u64>>,
    next_args: Option<CudaSlice<u32>>,
    next_work: Option<CudaSlice<u32>>,
    /// A 3-D frame with normals: each work item's class.
    item_cls: Option<CudaSlice<u8>>,
}

impl Kept {
    fn new(ctx: &Arc<CudaContext>) -> Result<Kept, GpuError> {
        Ok(Kept {
            stream: ctx.new_stream().during("creating a stream")?,
            classes: None,
            heights: None,
            depth_map: None,
            level_table: None,
            normals: false,
            voxel_classes: false,
            normals_dev: None,
            heights_host: None,
            normals_host: None,
            first: None,
            levels: Vec::new(),
            image: Default::default(),
            counters: None,
            counters_host: None,
            counters_at: 0,
            caps: None,
        })
    }

    /// The device address of word `word` of level `l`'s counters: words 0-7 the counts
    /// (boundary tiles, the three classes, then what the pruning writes: the longest pruned
    /// tape, the most choices, the overflow flags, the next level's items), words
    /// [`LENGTH_WORD`] and the next the instructions run (a u64). The kernels take them as
    /// pointers.
    fn counter(&self, l: usize, word: usize) -> u64 {
        debug_assert!(self.counters_at != 0, "a frame's counters");
        self.counters_at + (4 * (COUNTER_WORDS * l + word)) as u64
    }

    /// Clears the counters of `levels` levels for a frame (made or grown first).
    fn clear_counters(&mut self, levels: usize) -> Result<(), GpuError> {
        let words = COUNTER_WORDS * levels;
        kernels::grow(&self.stream, &mut self.counters, words)?;
        let what = "allocating page-locked memory for the counters";
        // SAFETY: read only after a copy has written them.
        let host =
            unsafe { kernels::pinned_room(&self.stream, self.counters_host.take(), words, what) }?;
        self.counters_host = Some(host);
        let dev = self.counters.as_mut().expect("grown");
        self.stream
            .memset_zeros(&mut dev.slice_mut(0..words))
            .during("clearing the tape render's counters")?;
        // The kernels write them through this address, on this stream only (so in order
        // with the clear and the copies back, which go through the slice).
        use cudarc::driver::DevicePtr;
        let (at, _record) = dev.device_ptr(&self.stream);
        self.counters_at = at;
        Ok(())
    }

    /// Queues the copy of levels `levels`' counters into page-locked memory.
    fn queue_read(&mut self, levels: std::ops::Range<usize>) -> Result<(), GpuError> {
        let what = "reading the tape render's counters";
        let words = COUNTER_WORDS * levels.start..COUNTER_WORDS * levels.end;
        let dev = self.counters.as_ref().expect("a frame's counters");
        let host = self.counters_host.as_mut().expect("a frame's counters");
        let host = &mut host.as_mut_slice().during(what)?[words.clone()];
        self.stream
            .memcpy_dtoh(&dev.slice(words), host)
            .during(what)
    }

    /// Level `l`'s counters and instructions run, copied by [`Kept::queue_read`] (the stream
    /// synchronized since).
    fn counted(&self, l: usize) -> Result<([u32; 8], u64), GpuError> {
        let what = "reading the tape render's counters";
        let host = self.counters_host.as_ref().expect("a frame's counters");
        let w = &host.as_slice().during(what)?[COUNTER_WORDS * l..COUNTER_WORDS * (l + 1)];
        let mut c = [0u32; 8];
        c.copy_from_slice(&w[..8]);
        Ok((
            c,
            u64::from(w[LENGTH_WORD]) | u64::from(w[LENGTH_WORD + 1]) << 32,
        ))
    }

    /// [`Kept::queue_read`] of level `l`, then the stream synchronized and the values read.
    fn read(&mut self, l: usize) -> Result<([u32; 8], u64), GpuError> {
        self.queue_read(l..l + 1)?;
        self.stream
            .synchronize()
            .during("reading the tape render's counters")?;
        self.counted(l)
    }
}

/// Words of a level's counters ([`Kept::counter`]): eight counts, then a u64 at
/// [`LENGTH_WORD`]; each level's 4 KB apart, its counts 2 KB from its u64. Every warp of a
/// level adds to both with atomics, and packed close they contended: at 256 bytes a level
/// (the counts and the u64 in their own 128-byte lines) the colonnade's voxel frames took
/// 0.99 / 2.70 ms at 512³ / 1024³ with normals against 0.92 / 2.41 with a buffer each, at 4 KB
/// 0.86 / 2.30 (run 156; which part of the memory system they met in was not isolated).
const COUNTER_WORDS: usize = 1024;

/// The word of a level's counters where its pruning writes the next level's item count
/// (`capacity_of` in tape.cu), which the next level's kernels read.
const ITEMS_WORD: usize = 7;

/// Where a level's instructions-run counter starts, in words.
const LENGTH_WORD: usize = 512;

/// One level's device buffers: the addresses of its counters and instructions run
/// ([`Kept::counter`]), each tile's `min`/`max` outcomes, and the boundary list.
struct LevelBuffers {
    counts: u64,
    length: u64,
    choices: CudaSlice<u8>,
    n_choices: CudaSlice<u32>,
    boundary: CudaSlice<u32>,
}

/// What a level runs: its index, whether it is the first level run depth by depth, its `n`
/// work items (row, column, offset and length of the tape in `pool`/`args`), the longest
/// tape of the level (`stride`).
struct Level<'a> {
    l: usize,
    first: bool,
    n: usize,
    stride: usize,
    /// The choices recorded per tape (the capacity of `choices`).
    kcap: u32,
    work: &'a CudaSlice<u32>,
    pool: &'a CudaSlice<u64>,
    args: &'a CudaSlice<u32>,
}

/// Where the pruning writes the next level: the pruned tapes, the children's work items
/// (`kk` x `kk` children per boundary tile, on `grid`).
struct Pruned<'a> {
    pool: &'a mut CudaSlice<u64>,
    args: &'a mut CudaSlice<u32>,
    work: &'a mut CudaSlice<u32>,
    kk: u32,
    grid: crate::search::render::LevelGrid,
}

/// Threads of a first-level block. Prospero's widest depths hold 1,231-1,337 instructions:
/// against 256 threads, 512 measured from 2 % slower to 5 % faster at 512² to 4096², 1,024
/// 2-25 % slower (run 146, one H200, medians; the kernels use at most 53 registers).
const ROOT_BLOCK: u32 = 512;

impl<T> Prepared<T>
where
    T: Bound + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    fn new(tape: &Tape, p: Precision, ordinal: usize) -> Result<Prepared<T>, GpuError> {
        let ctx = gpu::context(ordinal)?;
        ctx.bind_to_thread()
            .during("binding the device's context")?;
        let nslots = slots_of(tape.slots());
        let k = kernels(&ctx, ordinal, p, nslots, &tape.ext)?;
        let compose = crate::search::render::gpu::compose_kernel(&ctx, ordinal, p)?;
        let stream = ctx.new_stream().during("creating a stream")?;
        let alloc = "uploading the tape";
        let consts: Vec<T> = tape
            .consts
            .iter()
            .flat_map(|c| [T::lo_of(c.lo), T::hi_of(c.hi)])
            .collect();
        let consts = if consts.is_empty() {
            vec![T::nan(); 2]
        } else {
            consts
        };
        // The first level runs the whole tape depth by depth, one block per tile, when its
        // values fit a block's shared memory (Prospero in f64: 121 KB); else like the others.
        // IVJIT_TAPE_NO_ROOT (any value) takes the other way for every tape: the GPU test
        // covers that way with it.
        let root_eval_bytes = tape.len() * 2 * std::mem::size_of::<T>();
        let root_prune_bytes = (3 * tape.len() + ROOT_BLOCK as usize + 2) * 4;
        let shared_max = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .during("querying the shared memory per block")? as usize;
        if tape.len() * 4 > shared_max {
            return Err(GpuError::Tape(format!(
                "a tape of {} instructions does not fit the {shared_max} bytes of shared memory \
                 a block may have for its pruning; render it on the CPU",
                tape.len()
            )));
        }
        let root =
            root_eval_bytes.max(root_prune_bytes) <= shared_max && !crate::gpu::env::tape_no_root();
        // The kernels are shared by every tape of this shape on the device, so each cap is the
        // device's opt-in maximum, never one tape's size: a tape that set a smaller cap made a
        // larger tape's launch, prepared on another thread, fail with CUDA_ERROR_INVALID_VALUE
        // (run 72 of docs/gpu-runs.md). A launch still asks for only what it uses.
        let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        for (kernel, what) in [
            (&k.prune_warp, "setting the pruning's shared memory"),
            (&k.eval, "setting the interpreter's shared memory"),
            (&k.root_eval, "setting the first level's shared memory"),
            (&k.root_prune, "setting the first level's shared memory"),
        ] {
            kernel.set_attribute(attr, shared_max as i32).during(what)?;
        }
        let (order, starts, cix) = tape.depths();
        let recs: Vec<u32> = order
            .iter()
            .flat_map(|&i| {
                let i = i as usize;
                [
                    i as u32,
                    tape.insts[i] as u32 & 0xffff,
                    tape.args[i],
                    cix[i],
                ]
            })
            .collect();
        let prepared = Prepared {
            nlv: (starts.len() - 1) as u32,
            consts: stream.clone_htod(&consts).during(alloc)?,
            pool: stream.clone_htod(&tape.insts).during(alloc)?,
            args: stream.clone_htod(&tape.args).during(alloc)?,
            recs: stream.clone_htod(&recs).during(alloc)?,
            starts: stream.clone_htod(&starts).during(alloc)?,
            root,
            root_eval_bytes,
            root_prune_bytes,
            shared_max,
            len: tape.len(),
            choices: tape.choices(),
            nslots,
            kept: std::sync::Mutex::new(None),
            ctx,
            k,
            compose,
        };
        stream.synchronize().during("uploading the tape")?;
        Ok(prepared)
    }

    /// Launches the interpreter on the level's tiles: each tile's class into `cls`, with a
    /// level after this one its choices and the boundary list into `bufs`.
    #[allow(clippy::too_many_arguments)]
    fn eval_level(
        &self,
        stream: &Arc<CudaStream>,
        plan: &Plan,
        lv: &Level<'_>,
        bufs: &mut LevelBuffers,
        cls: &mut cudarc::driver::CudaViewMut<'_, u8>,
        heights: Option<&mut cudarc::driver::CudaViewMut<'_, u32>>,
        item_cls: Option<&mut CudaSlice<u8>>,
        n_dev: Option<u64>,
    ) -> Result<(), GpuError> {
        let kcap = lv.kcap;
        let (k, levels) = (&self.k, &plan.levels);
        // The level's item count as the pruning before it wrote it (its counters' word 7),
        // or none (a null pointer: the launch's n).
        let n_dev = n_dev.unwrap_or(0);
        let null = 0u64;
        let g = &levels[lv.l];
        let record: i32 = (lv.l + 1 < levels.len()) as i32;
        let (n, n32, stride, first) = (lv.n, lv.n as u32, lv.stride, lv.first);
        let total_choices = self.choices as u32;
        let out = crate::search::tape::OUT as u32;
        let mut b = stream.launch_builder(if first { &k.root_eval } else { &k.eval });
        b.arg(&n32).arg(lv.work);
        if first {
            // The first level's tape is this one's (its records).
            b.arg(&self.recs)
                .arg(&self.consts)
                .arg(&self.starts)
                .arg(&self.nlv)
                .arg(&total_choices);
        } else {
            b.arg(lv.pool).arg(&self.consts).arg(&out);
        }
        // A tile's children share its tape; in blocks of 64 of them the tape is read from
        // shared memory.
        const STAGED_BLOCK: u32 = 64;
        let dims = if plan.z.is_some() { 3 } else { 2 };
        let stage: u32 = if !first
            && lv.l > 0
            && (levels[lv.l - 1].tile / g.tile).pow(dims) % STAGED_BLOCK == 0
            && stride * 8 <= self.shared_max
        {
            stride as u32
        } else {
            0
        };
        b.arg(&mut bufs.choices)
            .arg(&mut bufs.n_choices)
            .arg(&record);
        let a = plan.axes;
        kernels::push_grid(&mut b, &a, &g.tile, plan);
        let (zc, depth) = z_args(plan);
        push_z(&mut b, &zc, &depth);
        match heights {
            Some(h) => b.arg(h),
            None => b.arg(&null),
        };
        match item_cls {
            Some(c) => b.arg(c),
            None => b.arg(&null),
        };
        b.arg(cls)
            .arg(&g.cols)
            .arg(&mut bufs.boundary)
            .arg(&bufs.counts)
            .arg(&bufs.length);
        if !first {
            b.arg(&stage).arg(&n_dev).arg(&kcap);
        }
        let shape = if first {
            LaunchConfig {
                grid_dim: (n32, 1, 1),
                block_dim: (ROOT_BLOCK, 1, 1),
                shared_mem_bytes: self.root_eval_bytes as u32,
            }
        } else if stage > 0 {
            LaunchConfig {
                grid_dim: (n.div_ceil(STAGED_BLOCK as usize) as u32, 1, 1),
                block_dim: (STAGED_BLOCK, 1, 1),
                shared_mem_bytes: (stride * 8) as u32,
            }
        } else {
            spread(n, if n <= 8192 { 32 } else { 128 })
        };
        // SAFETY: the arguments match the kernel's signature (a null pointer where no count
        // is read); `work` holds 4n entries (the first *n_dev written) whose tapes lie in
        // `pool` (and `args`); `choices` holds n times kcap (the kernel records no more per
        // tape); `n_choices` and `boundary` n entries (when recording); the first level's
        // shared memory holds a value per instruction.
        unsafe { b.launch(shape) }.during("launching the tape interpreter")?;
        Ok(())
    }

    /// Launches the pruning of the level's `nb` boundary tiles: each one's tape pruned by its
    /// choices into `into`, with its children's work items.
    #[allow(clippy::too_many_arguments)]
    fn prune_level(
        &self,
        stream: &Arc<CudaStream>,
        plan: &Plan,
        lv: &Level<'_>,
        nb: usize,
        bufs: &mut LevelBuffers,
        heights: Option<&cudarc::driver::CudaView<'_, u32>>,
        into: &mut Pruned<'_>,
    ) -> Result<(), GpuError> {
        let k = &self.k;
        let (n32, stride) = (lv.n as u32, lv.stride);
        // A warp per tile, 4 per block where their tapes fit shared memory together
        // (one always fits: `Prepared::new` checks the longest tape).
        let per_block = if 4 * stride * 4 <= self.shared_max {
            4
        } else {
            1
        };
        let (nb32, stride32) = (nb as u32, stride as u32);
        let (kernel, shape) = if lv.first {
            let shape = LaunchConfig {
                grid_dim: (nb32, 1, 1),
                block_dim: (ROOT_BLOCK, 1, 1),
                shared_mem_bytes: self.root_prune_bytes as u32,
            };
            (&k.root_prune, shape)
        } else {
            let shape = LaunchConfig {
                grid_dim: (nb.div_ceil(per_block) as u32, 1, 1),
                block_dim: (32 * per_block as u32, 1, 1),
                shared_mem_bytes: (per_block * stride * 4) as u32,
            };
            (&k.prune_warp, shape)
        };
        let mut b = stream.launch_builder(kernel);
        b.arg(&nb32)
            .arg(&bufs.boundary)
            .arg(&n32)
            .arg(lv.work)
            .arg(lv.pool);
        b.arg(lv.args);
        let total_choices = self.choices as u32;
        if lv.first {
            b.arg(&self.recs)
                .arg(&self.starts)
                .arg(&self.nlv)
                .arg(&total_choices)
                .arg(&bufs.choices);
        } else {
            b.arg(&bufs.choices).arg(&bufs.n_choices).arg(&lv.kcap);
        }
        b.arg(&stride32);
        b.arg(&mut *into.pool)
            .arg(&mut *into.args)
            .arg(&into.kk)
            .arg(&into.grid.rows)
            .arg(&into.grid.cols);
        let g = &plan.levels[lv.l];
        let depth = z_args(plan).1;
        let null = 0u64;
        b.arg(&into.grid.layers).arg(&depth);
        match heights {
            Some(h) => b.arg(h),
            None => b.arg(&null),
        };
        b.arg(&g.cols).arg(&g.tile);
        b.arg(&mut *into.work).arg(&bufs.counts);
        // SAFETY: matches the signature of the kernel chosen; the next pool and args hold nb
        // tapes of `stride` (the longest tape of the round, which pruning never lengthens);
        // the next work list nb k^2 items; shared memory holds a word per instruction (and per
        // thread at the first level) for each tile of a block.
        unsafe { b.launch(shape) }.during("launching the tape pruning")?;
        Ok(())
    }

    /// Every voxel's class of a 3-D plan (see [`DeviceTape::voxel_classes`]): the frame's
    /// levels' classes copied back and cut per level.
    fn voxel_classes(&self, plan: &Plan) -> Result<crate::search::voxels::LevelClasses, GpuError> {
        self.with_kept(|kept| {
            (kept.voxel_classes, kept.normals) = (true, false);
            let out = self.frame(plan, Part::WHOLE, kept);
            kept.voxel_classes = false;
            let counted = out?;
            let sizes = plan
                .levels
                .iter()
                .map(|g| g.rows as usize * g.cols as usize * g.layers as usize);
            let dev = kept.classes.as_ref().expect("a frame keeps its classes");
            let mut levels = Vec::with_capacity(plan.levels.len());
            let mut at = 0;
            for n in sizes {
                let level = dev.slice(at..at + n);
                let read = kept.stream.clone_dtoh(&level);
                levels.push(read.during("reading the voxels' classes")?);
                at += n;
            }
            let (rounds, stats) = rounds_of(plan, &counted);
            Ok((levels, rounds, stats))
        })
    }

    /// A 3-D frame (see [`crate::search::voxels`]) lent to `f` where it came back (page-locked
    /// memory kept for the next frame): the columns' heights and with `normals` their unit
    /// normals (three per column, NaN where none); the rounds and their mean tape lengths.
    fn voxels(
        &self,
        plan: &Plan,
        normals: bool,
        f: &mut Lend<'_>,
    ) -> Result<(Vec<Round2>, Vec<TapeRound>), GpuError> {
        self.with_kept(|kept| {
            kept.normals = normals;
            let counted = self.frame(plan, Part::WHOLE, kept)?;
            let n = plan.width as usize * plan.height as usize;
            let stream = kept.stream.clone();
            let map = kept
                .depth_map
                .as_ref()
                .expect("a 3-D frame composes its depth map");
            let what = "allocating page-locked memory for the depth map";
            // SAFETY (both): the copies below write every element lent.
            let mut hs =
                unsafe { kernels::pinned_room(&stream, kept.heights_host.take(), n, what) }?;
            stream
                .memcpy_dtoh(&map.slice(0..n), &mut hs.as_mut_slice().during(what)?[..n])
                .during("reading the depth map")?;
            let mut ns = None;
            if normals {
                let old = kept.normals_host.take();
                let mut host = unsafe { kernels::pinned_room(&stream, old, 3 * n, what) }?;
                let dev = kept.normals_dev.as_ref().expect("queued with the frame");
                stream
                    .memcpy_dtoh(
                        &dev.slice(0..3 * n),
                        &mut host.as_mut_slice().during(what)?[..3 * n],
                    )
                    .during("reading the normals")?;
                ns = Some(host);
            }
            stream.synchronize().during("reading the depth map")?;
            let lent_normals = match &ns {
                Some(h) => Some(&h.as_slice().during("reading the normals")?[..3 * n]),
                None => None,
            };
            f(
                &hs.as_slice().during("reading the depth map")?[..n],
                lent_normals,
            );
            kept.heights_host = Some(hs);
            if ns.is_some() {
                kept.normals_host = ns;
            }
            Ok(rounds_of(plan, &counted))
        })
    }

    /// Queues `ivjit_tape_normals` on every level of the 3-D frame just searched (its work
    /// items, tapes and item classes kept), into `kept.normals_dev` (made NaN by the depth
    /// map's composition).
    fn queue_normals(
        &self,
        stream: &Arc<CudaStream>,
        plan: &Plan,
        needed: &[Cap],
        kept: &mut Kept,
    ) -> Result<(), GpuError> {
        let (zc, depth) = z_args(plan);
        let levels = &plan.levels;
        for (l, g) in levels.iter().enumerate() {
            let n = needed[l].n;
            if n == 0 {
                continue;
            }
            let (work, pool, n_dev) = if l == 0 {
                let w = &kept.first.as_ref().expect("the first level's items").1;
                (w, &self.pool, 0u64)
            } else {
                let prev = &kept.levels[l - 1];
                let w = prev.next_work.as_ref().expect("the level's items");
                let p = prev.next_pool.as_ref().expect("the level's tapes");
                (w, p, kept.counter(l - 1, ITEMS_WORD))
            };
            let item_cls = kept.levels[l]
                .item_cls
                .as_ref()
                .expect("classes with normals");
            let map = kept.depth_map.as_ref().expect("composed");
            let normals = kept.normals_dev.as_mut().expect("grown");
            let (n32, last) = (n as u32, (l + 1 == levels.len()) as i32);
            let mut b = stream.launch_builder(&self.k.normals);
            b.arg(&n32).arg(&n_dev);
            b.arg(work)
                .arg(pool)
                .arg(&self.consts)
                .arg(item_cls)
                .arg(&last);
            let a = plan.axes;
            kernels::push_grid(&mut b, &a, &g.tile, plan);
            push_z(&mut b, &zc, &depth);
            b.arg(map).arg(normals);
            // SAFETY: matches ivjit_tape_normals; `work` holds the level's n items (the first
            // *n_dev written), their tapes in `pool`, `item_cls` n classes, `map` and
            // `normals` a column (three numbers) per pixel.
            unsafe { b.launch(spread(n, 128)) }.during("launching the normals")?;
        }
        Ok(())
    }

    /// Queues the depth map of a 3-D frame: per column the most of its levels' heights
    /// (`ivjit_tape_heights`), into `out` (grown to the image).
    #[allow(clippy::too_many_arguments)]
    fn compose_heights(
        &self,
        stream: &Arc<CudaStream>,
        plan: &Plan,
        heights: &CudaSlice<u32>,
        offsets: &[usize],
        out: &mut Option<CudaSlice<u32>>,
        normals: Option<&mut CudaSlice<f64>>,
        kept_table: &mut Option<(Vec<u32>, CudaSlice<u32>)>,
    ) -> Result<(), GpuError> {
        let table: Vec<u32> = plan
            .levels
            .iter()
            .zip(offsets)
            .flat_map(|(g, &o)| [g.tile, g.cols, o as u32])
            .collect();
        // Uploaded when the plan's levels change, not every frame.
        if kept_table.as_ref().is_none_or(|(t, _)| *t != table) {
            let dev = stream
                .clone_htod(&table)
                .during("uploading the levels' table")?;
            *kept_table = Some((table, dev));
        }
        let table = &kept_table.as_ref().expect("uploaded").1;
        let n = plan.width as usize * plan.height as usize;
        kernels::grow(stream, out, n)?;
        let out = out.as_mut().expect("grown");
        let nlevels = plan.levels.len() as u32;
        let mut b = stream.launch_builder(&self.k.heights);
        b.arg(heights)
            .arg(table)
            .arg(&nlevels)
            .arg(&plan.width)
            .arg(&plan.height)
            .arg(out);
        let null = 0u64;
        match normals {
            Some(v) => b.arg(v),
            None => b.arg(&null),
        };
        // SAFETY: matches ivjit_tape_heights; `heights` holds every level's columns at its
        // offset, `table` three words per level, `out` at least width x height entries, and
        // `normals` (or null) three per entry.
        unsafe { b.launch(spread(n, 256)) }.during("launching the depth map's composition")?;
        Ok(())
    }

    /// A whole frame, the image lent to `f` where it came back.
    fn render(
        &self,
        plan: &Plan,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(Vec<Round2>, Vec<TapeRound>), GpuError> {
        self.with_kept(|kept| {
            let counted = self.frame(plan, Part::WHOLE, kept)?;
            kept.image
                .lend(plan.width as usize * plan.height as usize, f)?;
            Ok(rounds_of(plan, &counted))
        })
    }

    /// The rows of `part` of a frame, copied into `bands` (`(at, rows)`: the image's bytes
    /// from `at`); each level's counters.
    fn render_part(
        &self,
        plan: &Plan,
        part: Part,
        mut bands: Vec<(usize, &mut [u8])>,
    ) -> Result<Vec<([u32; 8], u64)>, GpuError> {
        self.with_kept(|kept| {
            let counted = self.frame(plan, part, kept)?;
            kept.image.copy_rows(&kept.stream, &mut bands)?;
            Ok(counted)
        })
    }

    /// `f` with what the last frame kept (one frame at a time; a frame that failed leaves
    /// nothing for the next), the device's context bound to the thread.
    fn with_kept<R>(
        &self,
        f: impl FnOnce(&mut Kept) -> Result<R, GpuError>,
    ) -> Result<R, GpuError> {
        self.ctx
            .bind_to_thread()
            .during("binding the device's context")?;
        let mut guard = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept = match guard.take() {
            Some(k) => k,
            None => Kept::new(&self.ctx)?,
        };
        let out = f(&mut kept)?;
        *guard = Some(kept);
        Ok(out)
    }

    /// A frame's `part`: when the last frame rendered the same plan and part, a pass that
    /// takes its sizes as capacities and reads no counter before the end (the host launches
    /// every level at once); if a capacity was short (the kernels never write past one, they
    /// flag it), or for a new plan, a pass that reads each level's counters before sizing the
    /// next. The image stays in `kept.image` (copied back into its page-locked memory for a
    /// whole frame); returns each level's counters.
    fn frame(
        &self,
        plan: &Plan,
        part: Part,
        kept: &mut Kept,
    ) -> Result<Vec<([u32; 8], u64)>, GpuError> {
        let mut key = plan_key(plan);
        key.extend([part.index as u64, part.count as u64]);
        key.push(kept.voxel_classes as u64);
        let mut caps = match &kept.caps {
            Some((k, caps)) if *k == key => Some(caps.clone()),
            _ => None,
        };
        if crate::gpu::env::tape_short_caps() {
            for c in caps.iter_mut().flatten() {
                (c.stride, c.choices, c.nb) = (c.stride / 2, c.choices / 2, c.nb / 2);
            }
        }
        let mut done = None;
        if let Some(caps) = caps {
            done = self.pass(plan, part, kept, Some(&caps))?;
        }
        match done {
            Some((counted, _)) => Ok(counted),
            None => {
                let out = self.pass(plan, part, kept, None)?;
                let Some((counted, caps)) = out else {
                    return Err(GpuError::Tape(
                        "a tape render reading its counters ran short of room".to_string(),
                    ));
                };
                kept.caps = Some((key, caps));
                Ok(counted)
            }
        }
    }

    /// One pass of a frame's part (see [`Prepared::frame`]): with `caps`, None when one was
    /// short. Leaves the image in `kept.image` (a whole frame's in its page-locked memory), the
    /// stream synchronized; returns each level's counters and the sizes each level needed.
    #[allow(clippy::type_complexity)]
    fn pass(
        &self,
        plan: &Plan,
        part: Part,
        kept: &mut Kept,
        caps: Option<&[Cap]>,
    ) -> Result<Option<(Vec<([u32; 8], u64)>, Vec<Cap>)>, GpuError> {
        let stream = kept.stream.clone();
        let mut profile = Profile::new();
        let levels = &plan.levels;
        let alloc = "allocating the tape render's buffers";
        let mut stride = self.len;
        let mut max_choices = self.choices;
        // A 2-D plan marks each level's classes, a 3-D one each level's column heights or
        // (voxel classes) its tiles' classes.
        let layered = plan.z.is_some();
        let voxel_classes = layered && kept.voxel_classes;
        let heights_mode = layered && !voxel_classes;
        let mut offsets = Vec::with_capacity(levels.len());
        let mut total = 0usize;
        let size = |g: &super::super::render::LevelGrid| {
            let layers = if voxel_classes { g.layers } else { 1 };
            g.rows as usize * g.cols as usize * layers as usize
        };
        for g in levels {
            offsets.push(total);
            total += size(g);
        }
        // Level l's classes or column heights in their buffer.
        let marked = |l: usize| offsets[l]..offsets[l] + size(&levels[l]);
        let (n_classes, n_heights) = if heights_mode { (1, total) } else { (total, 1) };
        let mut classes = kernels::room(&stream, kept.classes.take(), n_classes, alloc)?;
        let mut heights = kernels::room(&stream, kept.heights.take(), n_heights, alloc)?;
        if heights_mode {
            stream
                .memset_zeros(&mut heights)
                .during("clearing the columns' heights")?;
        } else {
            kernels::fill(&stream, &mut classes, UNSET)?;
        }
        let g0 = levels[0];
        let key = (g0.rows, g0.cols, g0.layers, stride, part);
        // The first level's work items (row and layer, column, the whole tape) of the part's
        // rows: uploaded once per grid.
        let owned = (0..g0.rows).filter(|&r| part.owns(r));
        let mut n = owned.clone().count() * g0.cols as usize * g0.layers as usize;
        let mut work = match kept.first.take() {
            Some((k, w)) if k == key => w,
            _ => {
                let (cols, layers) = (g0.cols, g0.layers);
                let first: Vec<u32> = owned
                    .flat_map(|r| {
                        (0..layers).flat_map(move |z| {
                            (0..cols).flat_map(move |c| [z << 16 | r, c, 0, stride as u32])
                        })
                    })
                    .collect();
                // A part without rows has no items (n = 0: no launch reads them).
                let first = if first.is_empty() { vec![0; 4] } else { first };
                stream.clone_htod(&first).during(alloc)?
            }
        };
        if kept.levels.len() < levels.len() {
            kept.levels.resize_with(levels.len(), LevelKept::default);
        }
        kept.clear_counters(levels.len())?;
        // The round's tapes: the prepared one first, then each round's pruned ones.
        let mut input: Option<(CudaSlice<u64>, CudaSlice<u32>)> = None;
        let mut counted_all = Vec::with_capacity(levels.len());
        let mut needed = Vec::with_capacity(levels.len());
        for (l, g) in levels.iter().enumerate() {
            let next = levels.get(l + 1);
            // The first level's sizes are the tape's; later ones from the last frame.
            if let (Some(caps), true) = (caps, l > 0) {
                (n, stride, max_choices) = (caps[l].n, caps[l].stride, caps[l].choices);
            }
            let rec = if next.is_some() { n.max(1) } else { 1 };
            let lk = std::mem::take(&mut kept.levels[l]);
            // Every element is written before it is read (the counters were cleared above).
            let mut bufs = LevelBuffers {
                counts: kept.counter(l, 0),
                length: kept.counter(l, LENGTH_WORD),
                choices: kernels::room(&stream, lk.choices, rec * max_choices, alloc)?,
                n_choices: kernels::room(&stream, lk.n_choices, rec, alloc)?,
                boundary: kernels::room(&stream, lk.boundary, rec, alloc)?,
            };
            // With normals, each item's class (every item's written before it is read).
            let with_normals = layered && kept.normals;
            let mut item_cls = match with_normals {
                true => Some(kernels::room(&stream, lk.item_cls, n.max(1), alloc)?),
                false => lk.item_cls,
            };
            let (pool, args) = match &input {
                Some((p, a)) => (p, a),
                None => (&self.pool, &self.args),
            };
            let level = Level {
                l,
                first: l == 0 && self.root,
                n,
                stride,
                kcap: max_choices as u32,
                work: &work,
                pool,
                args,
            };
            profile.mark(&stream, format!("setup {}", g.tile))?;
            if n > 0 {
                let mut cls = classes.slice_mut(if heights_mode { 0..1 } else { marked(l) });
                let mut hs = heights.slice_mut(if heights_mode { marked(l) } else { 0..1 });
                let hs = (!voxel_classes).then_some(&mut hs);
                // The items are the count the pruning before wrote (below its capacity n).
                let n_dev = (l > 0).then(|| kept.counter(l - 1, ITEMS_WORD));
                let ic = item_cls.as_mut().filter(|_| with_normals);
                self.eval_level(&stream, plan, &level, &mut bufs, &mut cls, hs, ic, n_dev)?;
            }
            profile.mark(&stream, format!("eval {}", g.tile))?;
            let nb = match caps {
                Some(caps) => caps[l].nb,
                None => {
                    let (counted, ran) = kept.read(l)?;
                    counted_all.push((counted, ran));
                    counted[0] as usize
                }
            };
            needed.push(Cap {
                n,
                stride,
                choices: max_choices,
                nb,
            });
            let mut here = LevelKept {
                next_pool: lk.next_pool,
                next_args: lk.next_args,
                next_work: lk.next_work,
                item_cls,
                ..LevelKept::default()
            };
            let pruned = match next {
                None => None,
                Some(ng) => {
                    let kk = g.tile / ng.tile;
                    let size = nb * stride;
                    let next_n = nb * (if layered { kk.pow(3) } else { kk * kk }) as usize;
                    // The kernels index a level's work items as 4 t in 32 bits: at most 2^30
                    // of them (a 2-D image has at most 2^30 pixels; a voxel grid may need more,
                    // and an item left out would leave its voxels unseen).
                    if next_n >= 1 << 30 {
                        return Err(GpuError::Tape(format!(
                            "the level of tiles of {} has {next_n} tiles to evaluate, more than \
                             the GPU's work lists hold (2^30); use a smaller grid or the CPU",
                            ng.tile
                        )));
                    }
                    // Written by the pruning before the next level reads them.
                    let mut next_pool = kernels::room(&stream, here.next_pool.take(), size, alloc)?;
                    let mut next_args = kernels::room(&stream, here.next_args.take(), size, alloc)?;
                    let mut next_work =
                        kernels::room(&stream, here.next_work.take(), 4 * next_n, alloc)?;
                    profile.mark(&stream, format!("read {}", g.tile))?;
                    if nb > 0 {
                        let mut into = Pruned {
                            pool: &mut next_pool,
                            args: &mut next_args,
                            work: &mut next_work,
                            kk,
                            grid: *ng,
                        };
                        let hs = heights.slice(if heights_mode { marked(l) } else { 0..1 });
                        let hs = (!voxel_classes).then_some(&hs);
                        self.prune_level(&stream, plan, &level, nb, &mut bufs, hs, &mut into)?;
                        profile.mark(&stream, format!("prune {}", g.tile))?;
                        if caps.is_none() {
                            let (counted, _) = kept.read(l)?;
                            self.check_slots(&counted)?;
                            stride = counted[4] as usize;
                            max_choices = counted[5] as usize;
                        }
                    }
                    Some((next_pool, next_args, next_work, next_n))
                }
            };
            here.choices = Some(bufs.choices);
            (here.n_choices, here.boundary) = (Some(bufs.n_choices), Some(bufs.boundary));
            kept.levels[l] = here;
            // This level's tapes and work items go back where they came from (the stream
            // orders their next use after this frame's).
            if l == 0 {
                kept.first = Some((key, work));
            } else {
                let prev = &mut kept.levels[l - 1];
                prev.next_work = Some(work);
                if let Some((p, a)) = input.take() {
                    (prev.next_pool, prev.next_args) = (Some(p), Some(a));
                }
            }
            let Some((next_pool, next_args, next_work, next_n)) = pruned else {
                break;
            };
            input = Some((next_pool, next_args));
            work = next_work;
            n = next_n;
        }
        profile.mark(&stream, "between".to_string())?;
        let (compose, image) = (&self.compose, &mut kept.image);
        if voxel_classes {
            // The levels' classes stay in `classes` for the caller.
        } else if layered {
            if kept.normals {
                let n = plan.width as usize * plan.height as usize;
                kernels::grow(&stream, &mut kept.normals_dev, 3 * n)?;
            }
            let normals = kept.normals_dev.as_mut().filter(|_| kept.normals);
            let (out, table) = (&mut kept.depth_map, &mut kept.level_table);
            self.compose_heights(&stream, plan, &heights, &offsets, out, normals, table)?;
            if kept.normals {
                self.queue_normals(&stream, plan, &needed, kept)?;
            }
        } else if part == Part::WHOLE {
            render::gpu::compose_queued(&stream, compose, plan, &classes, &offsets, image)?;
        } else {
            let rows = render::gpu::Rows {
                band: levels[0].tile,
                index: part.index as u32,
                count: part.count as u32,
            };
            render::gpu::compose_kept(&stream, compose, plan, &classes, &offsets, rows, image)?;
        }
        kept.classes = Some(classes);
        kept.heights = Some(heights);
        if caps.is_some() {
            // Every level's counters, in one copy.
            kept.queue_read(0..levels.len())?;
        }
        stream.synchronize().during("waiting for the tape render")?;
        profile.mark(&stream, "compose".to_string())?;
        profile.print();
        if let Some(caps) = caps {
            // Every level's counters, read once: a short capacity (bit 2) or a tape needing
            // more slots than the interpreter has (bit 1) sends the frame to a reading pass.
            // So does a level with more boundary tiles than its capacity where that was 0:
            // no pruning was launched to flag it, and those tiles' children went unseen (in
            // 3-D, heights too low; found by IVJIT_TAPE_SHORT_CAPS halving a capacity of 1).
            for (l, cap) in caps.iter().enumerate().take(levels.len()) {
                let (counted, ran) = kept.counted(l)?;
                let unpruned = l + 1 < levels.len() && counted[0] as usize > cap.nb;
                if counted[6] != 0 || unpruned {
                    return Ok(None);
                }
                counted_all.push((counted, ran));
            }
        }
        Ok(Some((counted_all, needed)))
    }

    /// The error of a pruning whose tape needed more slots than the interpreter has (never:
    /// pruning does not lengthen lifetimes; such a tape's children are not run).
    fn check_slots(&self, counted: &[u32; 8]) -> Result<(), GpuError> {
        if counted[6] & 1 != 0 {
            return Err(GpuError::Tape(format!(
                "a pruned tape needed more than the {} slots of the interpreter",
                self.nslots
            )));
        }
        Ok(())
    }
}

/// The rounds and mean tape lengths of a frame of `plan` from each level's counters.
fn rounds_of(plan: &Plan, counted: &[([u32; 8], u64)]) -> (Vec<Round2>, Vec<TapeRound>) {
    plan.levels
        .iter()
        .zip(counted)
        .map(|(g, (c, ran))| round_of(g.tile, c, *ran))
        .unzip()
}

/// A level's round and mean tape length from its counters (`counted`: boundary, outside,
/// inside, boundary again by class; `ran`: instructions run).
fn round_of(tile: u32, counted: &[u32; 8], ran: u64) -> (Round2, TapeRound) {
    let round = Round2 {
        tile,
        boxes: (counted[1] + counted[2] + counted[3]) as u64,
        outside: counted[1] as u64,
        inside: counted[2] as u64,
        boundary: counted[3] as u64,
    };
    let stat = TapeRound {
        tile,
        boxes: round.boxes,
        mean_len: ran as f64 / round.boxes.max(1) as f64,
    };
    (round, stat)
}
