//! The GPU interpreter of scalar programs: the first tier of a program too long to compile
//! quickly.
//!
//! One kernel per precision, the same for every program (compiled once, then read from the disk
//! cache), runs a program's [`Bytecode`]: one thread per box (a grid-stride loop), the
//! instruction words read by the whole warp at once (every thread runs the same instruction, so
//! the dispatch, a `brx.idx` jump table, never diverges), each value in a slot of a scratch
//! array in device memory laid out slot by slot (`scratch + (slot * threads + thread) * size`),
//! so a warp's loads and stores of one slot are coalesced. Each scalar instruction is the PTX
//! instruction the compiled kernel uses for it (`add.rm.f64` for `add.rd`, `min.f64` for `min`,
//! `setp` and `selp` for comparisons and selects; `crate::ptx`), so the interpreter computes the
//! compiled kernel's bits, and the tests hold it to the CPU evaluator bit for bit.
//!
//! It is slow for a kernel (every value goes through memory) and answers at once: Prospero's
//! 31,398 instructions need its words uploaded (500 KB), not 0.8 s of the driver's JIT.
//! `gpu::staged` uses it while the compiled code is on its way.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DriverError, PushKernelArg};

use super::batch::soa;
use super::load::{load_entry, Loaded};
use super::{Context as _, GpuError};
use crate::scalar::bytecode::{op, Bytecode, EncodeError};
use crate::scalar::{Precision, Program};

/// The interpreter's entry point.
pub(crate) const ENTRY: &str = "ivjit_interpreter";

/// Most scratch memory one launch allocates (bytes): fewer threads (each looping over more
/// boxes) when the program has many slots.
const SCRATCH_BYTES: usize = 256 << 20;

/// The PTX of the interpreter for precision `p`:
///
/// ```text
/// .visible .entry ivjit_interpreter(.param .u64 n, .param .u64 inputs, .param .u64 outputs,
///                                   .param .u64 code, .param .u64 count, .param .u64 scratch)
/// ```
///
/// `inputs` and `outputs` are device tables of the addresses of the input arrays (`2 * n_vars`,
/// element `i` of array `k` at `table[k] + i * size`) and output arrays; `code` the words of
/// `count` instructions; `scratch` `slots * threads` elements of the precision, `threads` the
/// launch's total thread count.
pub fn ptx(p: Precision) -> String {
    let (t, b, shift) = match p {
        Precision::F64 => ("f64", "b64", 3),
        Precision::F32 => ("f32", "b32", 2),
    };
    let round = ["rm", "rp", "rn"];
    let cmps = ["lt", "le", "gt", "ge", "eq"];
    let round_ints = ["rmi", "rpi", "rzi", "rni"];
    // The body of each operation code, in code order; each ends by jumping back.
    let mut cases: Vec<(u32, String)> = Vec::new();
    let ld = |dst: &str, addr: &str| format!("\tld.global.{t} {dst}, [{addr}];\n");
    let put = "\tbra.uni $L_put;\n".to_string();
    cases.push((
        op::INPUT,
        format!(
            "\tmul.wide.u32 %t, %wa, 8;\n\tadd.u64 %t, %t, %pin;\n\tld.global.nc.u64 %t, [%t];\n\
             \tcvta.to.global.u64 %t, %t;\n\tadd.u64 %t, %t, %off;\n\tld.global.nc.{t} %fd, [%t];\n{put}"
        ),
    ));
    cases.push((
        op::CONST,
        match p {
            Precision::F64 => format!("\tmov.b64 %fd, {{%wa, %wb}};\n{put}"),
            Precision::F32 => format!("\tmov.b32 %fd, %wa;\n{put}"),
        },
    ));
    cases.push((
        op::BOOL,
        "\tst.global.u32 [%ad], %wa;\n\tbra.uni $L_next;\n".to_string(),
    ));
    cases.push((
        op::STORE,
        format!(
            "{}\tmul.wide.u32 %t, %wb, 8;\n\tadd.u64 %t, %t, %pout;\n\tld.global.nc.u64 %t, [%t];\n\
             \tcvta.to.global.u64 %t, %t;\n\tadd.u64 %t, %t, %off;\n\tst.global.{t} [%t], %fa;\n\
             \tbra.uni $L_next;\n",
            ld("%fa", "%aa")
        ),
    ));
    for (base, name, arity) in [
        (op::ADD, "add", 2),
        (op::SUB, "sub", 2),
        (op::MUL, "mul", 2),
        (op::DIV, "div", 2),
        (op::FMA, "fma", 3),
        (op::SQRT, "sqrt", 1),
    ] {
        for (k, r) in round.iter().enumerate() {
            let loads: String = [("%fa", "%aa"), ("%fb", "%ab"), ("%fc", "%ac")][..arity]
                .iter()
                .map(|(d, a)| ld(d, a))
                .collect();
            let args = ["%fa", "%fb", "%fc"][..arity].join(", ");
            cases.push((
                base + k as u32,
                format!("{loads}\t{name}.{r}.{t} %fd, {args};\n{put}"),
            ));
        }
    }
    for (code, text) in [
        (op::NEG, format!("neg.{t} %fd, %fa;")),
        (op::ABS, format!("abs.{t} %fd, %fa;")),
    ] {
        cases.push((code, format!("{}\t{text}\n{put}", ld("%fa", "%aa"))));
    }
    for (code, name) in [(op::MIN, "min"), (op::MAX, "max")] {
        cases.push((
            code,
            format!(
                "{}{}\t{name}.{t} %fd, %fa, %fb;\n{put}",
                ld("%fa", "%aa"),
                ld("%fb", "%ab")
            ),
        ));
    }
    let store_bool = "\tselp.u32 %bd, 1, 0, %q;\n\tst.global.u32 [%ad], %bd;\n\tbra.uni $L_next;\n";
    for (k, c) in cmps.iter().enumerate() {
        cases.push((
            op::CMP + k as u32,
            format!(
                "{}{}\tsetp.{c}.{t} %q, %fa, %fb;\n{store_bool}",
                ld("%fa", "%aa"),
                ld("%fb", "%ab")
            ),
        ));
    }
    cases.push((
        op::ISNAN,
        format!(
            "{}\ttestp.notanumber.{t} %q, %fa;\n{store_bool}",
            ld("%fa", "%aa")
        ),
    ));
    let ld_bool = |dst: &str, addr: &str| format!("\tld.global.u32 {dst}, [{addr}];\n");
    for (code, name) in [(op::AND, "and"), (op::OR, "or")] {
        cases.push((
            code,
            format!(
                "{}{}\t{name}.b32 %bd, %ba, %bb;\n\tst.global.u32 [%ad], %bd;\n\tbra.uni $L_next;\n",
                ld_bool("%ba", "%aa"),
                ld_bool("%bb", "%ab")
            ),
        ));
    }
    cases.push((
        op::NOT,
        format!(
            "{}\txor.b32 %bd, %ba, 1;\n\tst.global.u32 [%ad], %bd;\n\tbra.uni $L_next;\n",
            ld_bool("%ba", "%aa")
        ),
    ));
    cases.push((
        op::SELECT,
        format!(
            "{}{}{}\tsetp.ne.u32 %q, %ba, 0;\n\tselp.{t} %fd, %fb, %fc, %q;\n{put}",
            ld_bool("%ba", "%aa"),
            ld("%fb", "%ab"),
            ld("%fc", "%ac")
        ),
    ));
    for (k, m) in round_ints.iter().enumerate() {
        cases.push((
            op::ROUND_INT + k as u32,
            format!("{}\tcvt.{m}.{t}.{t} %fd, %fa;\n{put}", ld("%fa", "%aa")),
        ));
    }
    cases.sort_by_key(|c| c.0);
    debug_assert!(cases.iter().enumerate().all(|(k, c)| c.0 == k as u32));
    debug_assert_eq!(cases.len() as u32, op::COUNT);
    let targets: Vec<String> = (0..cases.len()).map(|k| format!("$L_op{k}")).collect();
    let bodies: String = cases
        .iter()
        .map(|(k, body)| format!("$L_op{k}:\n{body}"))
        .collect();
    format!(
        r"//
// Generated by ivjit (src/gpu/interpreter.rs): the interpreter of scalar bytecode, {t}.
//
.version {version}
.target {target}
.address_size 64

.visible .entry {ENTRY}(
	.param .u64 n,
	.param .u64 inputs,
	.param .u64 outputs,
	.param .u64 code,
	.param .u64 count,
	.param .u64 scratch
)
{{
	.reg .pred %done, %q;
	.reg .b32 %r<4>, %w0, %op, %dst, %wa, %wb, %wc, %ba, %bb, %bd, %row;
	.reg .b64 %n, %i, %stride, %pin, %pout, %pcode, %ip, %end, %base, %off, %ad, %aa, %ab, %ac, %t;
	.reg .{t} %fa, %fb, %fc, %fd;

	ld.param.u64 %n, [n];
	ld.param.u64 %pin, [inputs];
	ld.param.u64 %pout, [outputs];
	ld.param.u64 %pcode, [code];
	ld.param.u64 %end, [count];
	ld.param.u64 %base, [scratch];
	cvta.to.global.u64 %pin, %pin;
	cvta.to.global.u64 %pout, %pout;
	cvta.to.global.u64 %pcode, %pcode;
	cvta.to.global.u64 %base, %base;
	shl.b64 %end, %end, 4;
	add.u64 %end, %end, %pcode;
	// i = ctaid.x * ntid.x + tid.x (this thread's first box and its column of the scratch);
	// stride = nctaid.x * ntid.x (the threads: the scratch's row, in elements).
	mov.u32 %r0, %ctaid.x;
	mov.u32 %r1, %ntid.x;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %nctaid.x;
	cvt.u64.u32 %i, %r2;
	mad.wide.u32 %i, %r0, %r1, %i;
	mul.wide.u32 %stride, %r3, %r1;
	mul.lo.u32 %row, %r3, %r1;
	shl.b32 %row, %row, {shift};
	shl.b64 %t, %i, {shift};
	add.u64 %base, %base, %t;
	setp.ge.u64 %done, %i, %n;
	@%done bra.uni $L_exit;
$L_box:
	shl.b64 %off, %i, {shift};
	mov.u64 %ip, %pcode;
$L_next:
	setp.ge.u64 %done, %ip, %end;
	@%done bra.uni $L_box_done;
	ld.global.nc.v4.u32 {{%w0, %wa, %wb, %wc}}, [%ip];
	add.u64 %ip, %ip, 16;
	shr.u32 %dst, %w0, 8;
	and.b32 %op, %w0, 255;
	mad.wide.u32 %ad, %dst, %row, %base;
	mad.wide.u32 %aa, %wa, %row, %base;
	mad.wide.u32 %ab, %wb, %row, %base;
	mad.wide.u32 %ac, %wc, %row, %base;
$L_table: .branchtargets {targets};
	brx.idx.uni %op, $L_table;
{bodies}$L_put:
	st.global.{b} [%ad], %fd;
	bra.uni $L_next;
$L_box_done:
	add.u64 %i, %i, %stride;
	setp.lt.u64 %q, %i, %n;
	@%q bra.uni $L_box;
$L_exit:
	ret;
}}
",
        version = crate::ptx::PTX_VERSION,
        target = crate::ptx::PTX_TARGET,
        targets = targets.join(", "),
    )
}

/// The interpreter's kernels, loaded per context and precision.
static LOADED: Mutex<Vec<(usize, Precision, Arc<Loaded>)>> = Mutex::new(Vec::new());

/// The interpreter for `precision` on `ctx` (compiled, or read from the disk cache, on first
/// use in the process).
fn kernel(
    ctx: &Arc<CudaContext>,
    precision: Precision,
    cache_dir: Option<&std::path::Path>,
) -> Result<Arc<Loaded>, GpuError> {
    let ordinal = ctx.ordinal();
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, _, l)) = loaded
        .iter()
        .find(|(o, p, _)| *o == ordinal && *p == precision)
    {
        return Ok(l.clone());
    }
    // A program without point calls: `load_entry` links nothing else in.
    let none = Program {
        precision,
        var_names: Vec::new(),
        insts: Vec::new(),
        outputs: Vec::new(),
        code_outputs: 0,
    };
    let l = Arc::new(load_entry(ctx, &none, (&ptx(precision), ENTRY), cache_dir)?);
    loaded.push((ordinal, precision, l.clone()));
    Ok(l)
}

/// A program's bytecode on one device, with the interpreter that runs it.
pub(crate) struct Interpreted {
    kernel: Arc<Loaded>,
    words: CudaSlice<u32>,
    count: usize,
    slots: usize,
    elem: usize,
}

/// Why a program is not interpreted.
#[derive(Debug)]
pub(crate) enum NotInterpreted {
    /// It has no bytecode (point calls).
    Encode,
    /// The device refused (compiling the interpreter, or uploading the words).
    Gpu(GpuError),
}

impl Interpreted {
    /// Encodes `program` and uploads its words to `ctx`'s device.
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        program: &Program,
        cache_dir: Option<&std::path::Path>,
    ) -> Result<Interpreted, NotInterpreted> {
        let code: Bytecode = crate::scalar::bytecode::encode(program)
            .map_err(|_: EncodeError| NotInterpreted::Encode)?;
        let kernel = kernel(ctx, program.precision, cache_dir).map_err(NotInterpreted::Gpu)?;
        let stream = ctx.default_stream();
        let words = stream
            .clone_htod(&code.words)
            .and_then(|w| stream.synchronize().map(|_| w))
            .during("uploading the bytecode")
            .map_err(NotInterpreted::Gpu)?;
        Ok(Interpreted {
            kernel,
            count: code.len(),
            slots: code.slots.max(1),
            elem: match program.precision {
                Precision::F64 => 8,
                Precision::F32 => 4,
            },
            words,
        })
    }

    /// What the disk cache did for the interpreter's kernel.
    pub(crate) fn disk(&self) -> super::DiskCacheOutcome {
        self.kernel.disk.clone()
    }

    /// The interpreter's function (for launch-shape queries).
    pub(crate) fn function(&self) -> &cudarc::driver::CudaFunction {
        &self.kernel.function
    }

    /// [`Interpreted::launch`] over a structure-of-arrays block: `n` elements, the `n_in`
    /// input arrays one after the other from `inputs`, the `n_out` output arrays from
    /// `outputs`.
    ///
    /// # Safety
    /// As for [`Interpreted::launch`], for the arrays of the block.
    pub(crate) unsafe fn launch_soa(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        n_in: usize,
        n_out: usize,
        inputs: u64,
        outputs: u64,
    ) -> Result<(), DriverError> {
        let (input, output) = (soa(inputs, n, self.elem), soa(outputs, n, self.elem));
        // SAFETY: as the caller vouches for the block.
        unsafe { self.launch(stream, n, n_in, n_out, &input, &output) }
    }

    /// Runs the program on `stream` over `n` elements: `input(k, at)` and `output(k, at)` are
    /// the device addresses of element `at` of input array `k` and output array `k`, as for
    /// the stages ([`super::staged::StagedCode::launch`]).
    ///
    /// # Safety
    /// Every address the functions give must be valid device memory of the stream's context
    /// for `n` elements from element 0 until the stream has run the launch, and no output may
    /// overlap an input.
    pub(crate) unsafe fn launch(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        n_in: usize,
        n_out: usize,
        input: &dyn Fn(usize, usize) -> u64,
        output: &dyn Fn(usize, usize) -> u64,
    ) -> Result<(), DriverError> {
        if n == 0 {
            return Ok(());
        }
        let block = self.kernel.block.clamp(32, 256) as usize;
        // Threads: enough to fill the device, at most one per element, and within the scratch.
        let most = (SCRATCH_BYTES / (self.slots * self.elem)).max(block);
        let full = self.kernel.max_grid as usize * self.kernel.block as usize;
        let threads = n.min(full).min(most).div_ceil(block) * block;
        let grid = threads / block;
        let table: Vec<u64> = (0..n_in)
            .map(|k| input(k, 0))
            .chain((0..n_out).map(|k| output(k, 0)))
            .collect();
        let d_table = stream.clone_htod(&table)?;
        // SAFETY: every slot is written before it is read (the bytecode is in SSA order).
        let scratch = unsafe { stream.alloc::<u8>(self.slots * threads * self.elem) }?;
        let (pt, _g0) = d_table.device_ptr(stream);
        let (pw, _g1) = self.words.device_ptr(stream);
        let (ps, _g2) = scratch.device_ptr(stream);
        let (n_arg, pin, pout, count) = (n as u64, pt, pt + 8 * n_in as u64, self.count as u64);
        let mut launch = stream.launch_builder(&self.kernel.function);
        launch
            .arg(&n_arg)
            .arg(&pin)
            .arg(&pout)
            .arg(&pw)
            .arg(&count)
            .arg(&ps);
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (block as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the kernel takes (u64 n, u64 inputs, u64 outputs, u64 code, u64 count,
        // u64 scratch); it reads the table's arrays for n elements, the code's `count`
        // instructions (their slots below `slots`, their arrays within the table) and the
        // scratch's `slots * threads` elements, as the caller vouches for the arrays.
        unsafe { launch.launch(cfg) }.map(drop)
    }
}
