// ivjit tape interpreter: src/search/tape/tape.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of), the
// #defines of tape.rs (NSLOTS, OP_*), `struct Iv { T lo, hi; }`, the operations
// op_neg ... op_max generated from their lowering (crate::lower::interpreted::operations),
// and with EXTENDED > 0, op_ext: the tape's operations run by their lowering's device
// functions (tape/gpu.rs, extended_calls).

// One operation on slots: the generated operation, and for min/max which side decides it on
// every box inside this one (the choice of src/search/tape/mod.rs's min_max, the same tests).
__device__ __forceinline__ Iv step(u32 op, Iv a, Iv b, unsigned char* choice)
{
#if EXTENDED > 0
    if ((op & 0xff) >= OP_EXT) return op_ext(op & 0xff, a, b);
#endif
    switch (op & 0xff) {
    case OP_NEG: return op_neg(a);
    case OP_ADD: return op_add(a, b);
    case OP_SUB: return op_sub(a, b);
    case OP_MUL: return op_mul(a, b);
    case OP_SQR: return op_sqr(a);
    case OP_SQRT: return op_sqrt(a);
    case OP_ABS: return op_abs(a);
    default: {
        bool is_min = (op & 0xff) == OP_MIN;
        Iv v = is_min ? op_min(a, b) : op_max(a, b);
        // An empty side (NaN) decides nothing: the comparisons are false.
        bool a_wins, b_wins;
        if (is_min) {
            a_wins = a.hi <= b.lo; b_wins = b.hi <= a.lo;
        } else {
            a_wins = a.lo >= b.hi; b_wins = b.lo >= a.hi;
        }
        if (a_wins && !(op & OP_B_MAY_BE_EMPTY)) *choice = 1;
        else if (b_wins && !(op & OP_A_MAY_BE_EMPTY)) *choice = 2;
        // Sign demand (Tape::signs_only), where the values decide nothing: a side of known
        // sign that cannot change the result's sign leaves the decision to the other (a min's
        // positive side, a max's negative one).
        else if (op & OP_SIGN_ONLY) {
            bool a_by_sign = is_min ? b.lo > (T)0 : b.hi < (T)0;
            bool b_by_sign = is_min ? a.lo > (T)0 : a.hi < (T)0;
            if (a_by_sign && !(op & OP_B_MAY_BE_EMPTY)) *choice = 1;
            else if (b_by_sign && !(op & OP_A_MAY_BE_EMPTY)) *choice = 2;
        }
        return v;
    }
    }
}

__device__ __forceinline__ bool is_choice(u32 op) {
    return (op & 0xff) == OP_MIN || (op & 0xff) == OP_MAX;
}

// The box of tile (r, q) of size tile (tile_bounds), narrowed outward to T.
__device__ void tile_box(u32 r, u32 q, u32 tile, u32 width, u32 height, GRID_PARAMS, Iv* x, Iv* y)
{
    u32 i0 = r * tile, j0 = q * tile;
    u32 i1 = min(i0 + tile, height), j1 = min(j0 + tile, width);
    double b[4];
    tile_bounds(i0, i1, j0, j1, width, height, GRID_ARGS, b);
    x->lo = lo_of(b[0]);
    x->hi = hi_of(b[1]);
    y->lo = lo_of(b[2]);
    y->hi = hi_of(b[3]);
}

// A work item's first word: the tile's row, and in 3-D (depth > 0: a voxel search) its layer
// above bit 16 (src/search/voxels.rs).
__device__ __forceinline__ u32 row_of(u32 word, u32 depth) { return depth ? word & 0xffffu : word; }
__device__ __forceinline__ u32 layer_of(u32 word, u32 depth) { return depth ? word >> 16 : 0; }

// The z bounds of layer lz of tiles of size tile, narrowed outward to T: the CPU's
// Plan::layers_box, a row's bounds on the z axis's constants ({z1/D, z0/D} rounded down,
// then up, D the depth: ZAxis::axes' y constants).
__device__ Iv layer_box(u32 lz, u32 tile, u32 depth, double az1_lo, double az0_lo,
                        double az1_hi, double az0_hi)
{
    u32 k0 = lz * tile, k1 = min(k0 + tile, depth);
    double b[4];
    tile_bounds(k0, k1, 0, 0, 1, depth, 0.0, 0.0, 0.0, 0.0, az1_lo, az0_lo, az1_hi, az0_hi, b);
    Iv z;
    z.lo = lo_of(b[2]);
    z.hi = hi_of(b[3]);
    return z;
}

// A tile's class where it is kept: in 2-D into cls; in 3-D, a filled tile (inside, or neither
// proven at the last level) raises its column's height (its top, in voxels from the bottom),
// or with heights null (every voxel's class asked for) its class goes into cls at
// (lz rows + r) cols + q (rows: the level's, of height voxels).
__device__ __forceinline__ void mark(unsigned char c, int record, u32 r, u32 q, u32 lz,
                                     u32 tile, u32 cols, u32 height, u32 depth,
                                     unsigned char* cls, u32* heights)
{
    if (depth == 0) cls[(size_t)r * cols + q] = c;
    else if (!heights) cls[((size_t)lz * ((height + tile - 1) / tile) + r) * cols + q] = c;
    else if (c == 1 || (c == 2 && !record))
        atomicMax(&heights[(size_t)r * cols + q], depth - lz * tile);
}

// Work item t: (row, col, tape offset, tape length); row 0xffffffff: a child clipped away.
// In 3-D (depth > 0) the row word holds the layer too (row_of, layer_of) and the z arguments
// give the layers' bounds.
extern "C" __global__ void ivjit_tape_eval(
    u32 n, const u32* work, const unsigned long long* pool, const T* consts, u32 out,
    unsigned char* choices, u32* n_choices, int record,
    GRID_PARAMS, u32 tile, u32 width, u32 height,
    double az1_lo, double az0_lo, double az1_hi, double az0_hi, u32 depth, u32* heights,
    unsigned char* item_cls,
    unsigned char* cls, u32 cols, u32* boundary, u32* counts, unsigned long long* length,
    u32 stage, const u32* n_dev, u32 kcap)
{
    u32 lane = threadIdx.x & 31;
    // n is the capacity the lists were made for (choices are indexed by it); the items are
    // the first *n_dev (written by the pruning before; never more than n). A tape with more
    // than kcap choices records kcap of them (and its count) and sets counts[6] bit 2 (a
    // replayed frame's capacities were short: the host renders it again, reading the
    // counters).
    u32 m = n_dev ? min(*n_dev, n) : n;
    // With stage > 0 (one item per thread; a block's items are one tile's children, which
    // share its tape), the block's tape is first copied into shared memory (at most stage
    // instructions) and its threads read it there.
    extern __shared__ unsigned long long staged[];
    u32 s_off = 0, s_len = 0;
    if (stage > 0) {
        u32 first = blockIdx.x * blockDim.x;
        if (first < m) { s_off = work[4 * first + 2]; s_len = min(work[4 * first + 3], stage); }
        for (u32 i = threadIdx.x; i < s_len; i += blockDim.x) staged[i] = pool[s_off + i];
        __syncthreads();
    }
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < m; t += gridDim.x * blockDim.x) {
        u32 rw = work[4 * t], q = work[4 * t + 1], off = work[4 * t + 2], len = work[4 * t + 3];
        bool valid = rw != 0xffffffffu;
        u32 r = row_of(rw, depth), lz = layer_of(rw, depth);
        unsigned char c = 3;
        if (valid) {
            Iv x, y;
            tile_box(r, q, tile, width, height, GRID_ARGS, &x, &y);
            Iv z = depth ? layer_box(lz, tile, depth, az1_lo, az0_lo, az1_hi, az0_hi) : y;
            Iv s[NSLOTS];
            u32 k = 0;
            const unsigned long long* tp = stage > 0 && off == s_off && len <= s_len
                ? staged : pool + off;
            for (u32 i = 0; i < len; i++) {
                unsigned long long ins = tp[i];
                u32 op = (u32)(ins & 0xffff), o = (u32)((ins >> 16) & 0xffff);
                u32 ia = (u32)((ins >> 32) & 0xffff), ib = (u32)(ins >> 48);
                unsigned char ch = 0;
                u32 kind = op & 0xff;
                Iv v;
                // CONST and VAR name a constant and a variable, not slots.
                if (kind == OP_CONST) { v.lo = consts[2 * ia]; v.hi = consts[2 * ia + 1]; }
                else if (kind == OP_VAR) v = ia == 0 ? x : (ia == 1 ? y : z);
                else v = step(op, s[ia], s[ib], &ch);
                if (is_choice(op)) {
                    if (record && k < kcap) choices[(size_t)k * n + t] = ch;
                    else if (record) atomicOr(&counts[6], 2u);
                    k++;
                }
                s[o] = v;
            }
            Iv v = s[out];
            c = v.lo > (T)0 ? 0 : (v.hi < (T)0 ? 1 : 2);
            mark(c, record, r, q, lz, tile, cols, height, depth, cls, heights);
            if (record) n_choices[t] = k;
            if (item_cls) item_cls[t] = c;
        }
        // One atomic per warp and class, and for the instructions run; a warp's boundary
        // tiles appended together, in order (neighbours share a tape, which the pruning's
        // blocks then read together).
        u32 active = __activemask();
        u32 leader = __ffs(active) - 1;
        if (record) {
            u32 votes = __ballot_sync(active, c == 2);
            u32 base = 0;
            if (lane == leader && votes) base = atomicAdd(&counts[0], __popc(votes));
            base = __shfl_sync(active, base, leader);
            if (c == 2) boundary[base + __popc(votes & ((1u << lane) - 1))] = t;
        }
        for (u32 v = 0; v < 3; v++) {
            u32 votes = __ballot_sync(active, c == v);
            if (lane == leader && votes) atomicAdd(&counts[1 + v], __popc(votes));
        }
        u32 sum = __reduce_add_sync(active, valid ? len : 0);
        if (lane == leader) atomicAdd(length, (unsigned long long)sum);
    }
}

// The number of slot operands of an operation.
__device__ __forceinline__ u32 arity(u32 op) {
    u32 kind = op & 0xff;
    if (kind == OP_CONST || kind == OP_VAR) return 0;
    if (kind == OP_ADD || kind == OP_SUB || kind == OP_MUL || is_choice(op)) return 2;
#if EXTENDED > 0
    if (op & OP_BINARY) return 2;
#endif
    return 1;
}

// A value's slot in the backward scan: its own, or a free one, or a new one.
template <typename S>
__device__ __forceinline__ u32 take(S* slot_of, u32 v, unsigned short* fr, u32* nfree,
                                    u32* used)
{
    S* at = slot_of + v;
    if (*at == 0xffff) {
        if (*nfree > 0) *at = fr[--*nfree];
        else *at = (S)(*used)++;
    }
    return *at;
}

// The slot scan of Tape's allocate over a pruned SSA tape of cnt instructions (operation j
// and its operands read by op_of(j) and args_of(j)), slot_of its scratch: writes the
// instructions on slots into dst; the slots used.
template <typename S, typename OpOf, typename ArgsOf>
__device__ u32 slot_scan(S* slot_of, u32 cnt, OpOf op_of, ArgsOf args_of,
                         unsigned long long* dst)
{
    for (u32 j = 0; j < cnt; j++) slot_of[j] = 0xffff;
    unsigned short fr[NSLOTS + 1];
    u32 nfree = 0, used = 1;
    slot_of[cnt - 1] = 0;
    for (u32 j = cnt; j-- > 0;) {
        u32 o = take(slot_of, j, fr, &nfree, &used);
        if (nfree <= NSLOTS) fr[nfree++] = (unsigned short)o;
        u32 op = op_of(j), ar = arity(op);
        u32 a = args_of(j) & 0xffff, c = args_of(j) >> 16;
        if (ar >= 1) a = take(slot_of, a, fr, &nfree, &used);
        if (ar == 2) c = take(slot_of, c, fr, &nfree, &used);
        dst[j] = (unsigned long long)op | ((unsigned long long)o << 16)
                 | ((unsigned long long)a << 32) | ((unsigned long long)c << 48);
    }
    return used;
}

// The children of a tile k times its children's size: k x k, or k x k x k in 3-D.
__device__ __forceinline__ u32 children(u32 k, u32 depth) { return depth ? k * k * k : k * k; }

// The boundary tiles a pruning launched for nb of them takes: the level's count (counts[0],
// from its evaluation), at most nb. A larger count sets counts[6] bit 2 (a replayed frame's
// capacity was short). The first thread of the launch writes the next level's item count,
// counts[7] (its evaluation reads it): nk children per tile.
__device__ u32 capacity_of(u32* counts, u32 nb, u32 nk)
{
    u32 have = counts[0], taken = min(have, nb);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (have > nb) atomicOr(&counts[6], 2u);
        counts[7] = taken * nk;
    }
    return taken;
}

// The children of boundary tile b (row r, column q, layer lz), k x k (x k in 3-D), clipped to
// next_rows x next_cols (x next_layers), each with the pruned tape (start, cnt), as
// next_work[b * children(k, depth) ..]; children from first, every step-th (the threads that
// share the work).
__device__ void write_children(u32* next_work, u32 b, u32 k, u32 r, u32 q, u32 lz,
                               u32 next_rows, u32 next_cols, u32 next_layers, u32 depth,
                               u32 start, u32 cnt, u32 first, u32 step)
{
    u32 nk = children(k, depth), kz = depth ? k : 1;
    for (u32 s = first; s < nk; s += step) {
        size_t item = (size_t)b * nk + s;
        u32 rr = r * k + (s / k) % k, cc = q * k + s % k, ll = lz * kz + s / (k * k);
        bool in = rr < next_rows && cc < next_cols && ll < next_layers;
        next_work[4 * item] = in ? (depth ? ll << 16 | rr : rr) : 0xffffffffu;
        next_work[4 * item + 1] = in ? cc : 0xffffffffu;
        next_work[4 * item + 2] = start;
        next_work[4 * item + 3] = in ? cnt : 0;
    }
}

// Whether 3-D tile (r, q, lz) lies below a filled tile of the same level and column: it can
// raise no column's height (src/search/voxels.rs), so it is not split. Never where every
// voxel's class is asked for (heights null).
__device__ __forceinline__ bool occluded(u32 r, u32 q, u32 lz, u32 tile, u32 cols, u32 depth,
                                         const u32* heights)
{
    return depth && heights && heights[(size_t)r * cols + q] > depth - lz * tile;
}

// The threads that give a pruned tape its slots together (group_slots): a block (the first
// level's pruning) or a warp (the warp pruning). rank/size: this thread's place and the count;
// sync: a barrier that also makes shared memory written before it visible; any: sync, then
// whether pred holds on some thread; max and excl_scan (the exclusive prefix sum, with the
// total in *total) over the group, with ws 32 words of shared scratch for a block.
struct BlockGroup {
    u32* ws;
    __device__ u32 rank() const { return threadIdx.x; }
    __device__ u32 size() const { return blockDim.x; }
    __device__ void sync() const { __syncthreads(); }
    __device__ bool any(bool pred) const { return __syncthreads_or(pred); }
    __device__ u32 max(u32 v) const
    {
        v = __reduce_max_sync(0xffffffffu, v);
        if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = v;
        __syncthreads();
        u32 m = 0;
        for (u32 w = 0; w < (blockDim.x >> 5); w++) m = ::max(m, ws[w]);
        __syncthreads();
        return m;
    }
    // blockDim.x a multiple of 32, at most 1024.
    __device__ u32 excl_scan(u32 v, u32* total) const
    {
        const u32 ALL = 0xffffffffu;
        u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
        u32 x = v;
        for (u32 d = 1; d < 32; d <<= 1) {
            u32 y = __shfl_up_sync(ALL, x, d);
            if (lane >= d) x += y;
        }
        if (lane == 31) ws[w] = x;
        __syncthreads();
        if (w == 0) {
            u32 s = lane < nw ? ws[lane] : 0;
            for (u32 d = 1; d < 32; d <<= 1) {
                u32 y = __shfl_up_sync(ALL, s, d);
                if (lane >= d) s += y;
            }
            if (lane < nw) ws[lane] = s;
        }
        __syncthreads();
        u32 r = (w > 0 ? ws[w - 1] : 0) + x - v;
        *total = ws[nw - 1];
        __syncthreads();
        return r;
    }
};

struct WarpGroup {
    __device__ u32 rank() const { return threadIdx.x & 31; }
    __device__ u32 size() const { return 32; }
    __device__ void sync() const { __syncwarp(); }
    __device__ bool any(bool pred) const { __syncwarp(); return __any_sync(0xffffffffu, pred); }
    __device__ u32 max(u32 v) const { return __reduce_max_sync(0xffffffffu, v); }
    __device__ u32 excl_scan(u32 v, u32* total) const
    {
        u32 lane = threadIdx.x & 31, x = v;
        for (u32 d = 1; d < 32; d <<= 1) {
            u32 y = __shfl_up_sync(0xffffffffu, x, d);
            if (lane >= d) x += y;
        }
        *total = __shfl_sync(0xffffffffu, x, 31);
        return x - v;
    }
};

// Slots for the pruned SSA tape of cnt instructions in dst/dargs (operation, operands), by the
// group g: the fewest slots (the most values live at once, K), as the one-thread backward
// scan gives, but found in parallel. Value v lives from its instruction to its last reader
// (the output to the end); at an instruction its operands' lives end before its own begins
// (it reads them before it writes). Handing out freed slots first in, first out: the first K
// values take slots 0..K-1, and value j >= K the slot of the value whose life ended (j-K)-th
// — which ended by instruction j, since at most K values are live there, and which nobody
// else takes. So a value's slot is the slot at the root of the chain j -> (j-K)-th ended,
// found by pointer jumping. The output is then swapped into slot OUT (0). Scratch: last (cnt
// words), hist (cnt + 1 words), pairs (cnt words, as two cnt-long halves of 16 bits).
// Rewrites dst with the slots; returns K.
template <typename G>
__device__ u32 group_slots(G g, u32 cnt, unsigned long long* dst, const u32* dargs, u32* last,
                           u32* hist, unsigned short* pairs)
{
    u32 tid = g.rank(), nt = g.size();
    for (u32 j = tid; j < cnt; j += nt) last[j] = j + 1 < cnt ? j + 1 : cnt;
    for (u32 t = tid; t <= cnt; t += nt) hist[t] = 0;
    g.sync();
    for (u32 j = tid; j < cnt; j += nt) {
        u32 op = (u32)(dst[j] & 0xffff), ar = arity(op);
        u32 a = dargs[j] & 0xffff, c = dargs[j] >> 16;
        if (ar >= 1) atomicMax(&last[a], j);
        if (ar == 2) atomicMax(&last[c], j);
    }
    g.sync();
    for (u32 j = tid; j < cnt; j += nt) atomicAdd(&hist[last[j]], 1u);
    g.sync();
    // hist[t] := the lives ended before instruction t (t = 0..cnt), by thread chunks.
    u32 n1 = cnt + 1, chunk = (n1 + nt - 1) / nt;
    u32 lo = min(tid * chunk, n1), hi = min(lo + chunk, n1), mine = 0, total;
    for (u32 t = lo; t < hi; t++) mine += hist[t];
    u32 run = g.excl_scan(mine, &total);
    for (u32 t = lo; t < hi; t++) { u32 h = hist[t]; hist[t] = run; run += h; }
    g.sync();
    // K: the most values live at once, after instruction j: j + 1 started, hist[j + 1] ended.
    u32 k = 1;
    for (u32 j = tid; j < cnt; j += nt) k = ::max(k, j + 1 - hist[j + 1]);
    u32 K = g.max(k);
    // The lives in the order they end (ties in any order): ended[r].
    unsigned short* ended = pairs;
    unsigned short* up = pairs + cnt;
    for (u32 j = tid; j < cnt; j += nt) ended[atomicAdd(&hist[last[j]], 1u)] = (unsigned short)j;
    g.sync();
    for (u32 j = tid; j < cnt; j += nt) up[j] = j < K ? j : ended[j - K];
    g.sync();
    // Pointer jumping between the two halves until every value points at a root (< K).
    unsigned short *from = up, *to = ended;
    for (;;) {
        bool more = false;
        for (u32 j = tid; j < cnt; j += nt) {
            u32 p = from[j], q = p < K ? p : from[p];
            to[j] = (unsigned short)q;
            more |= q >= K;
        }
        unsigned short* t = from; from = to; to = t;
        if (!g.any(more)) break;
    }
    u32 s_out = from[cnt - 1];
    for (u32 j = tid; j < cnt; j += nt) {
        u32 op = (u32)(dst[j] & 0xffff), ar = arity(op);
        u32 a = dargs[j] & 0xffff, c = dargs[j] >> 16;
        u32 o = from[j];
        if (ar >= 1) a = from[a];
        if (ar == 2) c = from[c];
        // Slot OUT and the output's slot swap names.
        o = o == s_out ? OUT_SLOT : (o == OUT_SLOT ? s_out : o);
        if (ar >= 1) a = a == s_out ? OUT_SLOT : (a == OUT_SLOT ? s_out : a);
        if (ar == 2) c = c == s_out ? OUT_SLOT : (c == OUT_SLOT ? s_out : c);
        dst[j] = (unsigned long long)op | ((unsigned long long)o << 16)
                 | ((unsigned long long)a << 32) | ((unsigned long long)c << 48);
    }
    return K;
}

// Tape::prune of src/search/tape/mod.rs with a warp per boundary tile b (work item boundary[b];
// blockDim.x / 32 tiles per block): its tape (instructions in pool, SSA operands in args)
// pruned with its choices into next_pool/next_args[b * stride ..]. Its scratch, in shared
// memory (stride words per warp), holds per instruction state << 16 | index (state 0 dead,
// 1 kept, 2 replaced; the index: the winner of a replaced instruction, then the new index),
// then the slots of the new instructions. The lanes take 32 instructions at a time, backward
// for liveness and forward for the new indices, each batch in parallel (masks and shuffles
// within the warp); the slots are given on lane 0 by Tape::prune's backward scan: the same
// tapes as Tape::prune. Its k x k
// children (clipped to next_rows x next_cols) go to next_work[b * k * k ..]. counts[4],
// counts[5]: the longest pruned tape and its most choices; counts[6]: bit 1 when a tape needed
// more than NSLOTS slots (never: pruning does not lengthen lifetimes; its children are not
// run), bit 2 when a replayed frame's capacity was short (more boundary tiles than nb, a tape
// longer than stride: no children). nb and stride are capacities: the tiles are the first
// counts[0] (capacity_of). In 3-D (depth > 0), a tile below a filled tile of its column
// (heights: this level's, cols wide; tile its size) has no children (occluded).
extern "C" __global__ void ivjit_tape_prune_warp(
    u32 nb, const u32* boundary, u32 n, const u32* work, const unsigned long long* pool,
    const u32* args, const unsigned char* choices, const u32* n_choices, u32 kcap, u32 stride,
    unsigned long long* next_pool, u32* next_args, u32 k, u32 next_rows, u32 next_cols,
    u32 next_layers, u32 depth, const u32* heights, u32 cols, u32 tile,
    u32* next_work, u32* counts)
{
    const u32 KEPT = 1u << 16, REPLACED = 2u << 16, ALL = 0xffffffffu;
    extern __shared__ unsigned char shared_bytes[];
    u32 lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    u32 b = blockIdx.x * nw + (threadIdx.x >> 5);
    u32 nbr = capacity_of(counts, nb, children(k, depth));
    if (b >= nbr) return;
    u32* sc = (u32*)shared_bytes + (size_t)(threadIdx.x >> 5) * stride;
    u32 t = boundary[b];
    u32 rw = work[4 * t], q = work[4 * t + 1], off = work[4 * t + 2], len = work[4 * t + 3];
    u32 r = row_of(rw, depth), lz = layer_of(rw, depth);
    if (len > stride || occluded(r, q, lz, tile, cols, depth, heights)) {
        // A replayed frame's tapes were longer than its capacity: no children.
        if (lane == 0 && len > stride) atomicOr(&counts[6], 2u);
        write_children(next_work, b, k, r, q, lz, 0, 0, 0, depth, 0, 0, lane, 32);
        return;
    }
    for (u32 i = lane; i < len; i += 32) sc[i] = 0;
    __syncwarp();
    if (lane == 0) sc[len - 1] = KEPT;
    __syncwarp();
    // Backward, 32 instructions at a time from the end, each batch with all its lanes: an
    // instruction is live if a later batch marked it (its state set) or a live instruction of
    // this batch uses it — found by ORing the batch's uses of live lanes into a mask until it
    // stops growing (a use points back, so at most one round per link of a chain). A live
    // decided min/max is replaced by its winner and uses only it; a live instruction uses its
    // operands. Uses outside the batch are marked KEPT (states before the batch are 0 or KEPT
    // until their own batch: the same write from any lane). The same states as Tape::prune's
    // sequential scan.
    u32 kc = n_choices[t];
    for (int base = (int)len - 32; base > -32; base -= 32) {
        int i = base + (int)lane;
        u32 op = 0, a = 0, c = 0, ch = 0;
        if (i >= 0) {
            op = (u32)(pool[off + i] & 0xffff);
            a = args[off + i] & 0xffff;
            c = args[off + i] >> 16;
        }
        bool isc = i >= 0 && is_choice(op);
        u32 cm = __ballot_sync(ALL, isc);
        // Only the first kcap choices were recorded (more: the frame is flagged and redone).
        u32 ci = kc - __popc(cm >> lane);
        if (isc && ci < kcap) ch = choices[(size_t)ci * n + t];
        kc -= __popc(cm);
        bool decided = ch == 1 || ch == 2;
        u32 ar = i >= 0 ? arity(op) : 0;
        // The instructions this one uses when live, as lanes of the batch (bit) or not.
        u32 u0 = decided ? (ch == 1 ? a : c) : a, u1 = decided ? u0 : c;
        bool has0 = decided || ar >= 1, has1 = !decided && ar == 2;
        u32 uses = 0;
        if (has0 && (int)u0 >= base) uses |= 1u << ((int)u0 - base);
        if (has1 && (int)u1 >= base) uses |= 1u << ((int)u1 - base);
        u32 live = __ballot_sync(ALL, i >= 0 && sc[i] != 0);
        for (;;) {
            u32 reached = __reduce_or_sync(ALL, (live >> lane) & 1 ? uses : 0u) | live;
            if (reached == live) break;
            live = reached;
        }
        if ((live >> lane) & 1) {
            sc[i] = decided ? (REPLACED | u0) : KEPT;
            if (has0 && (int)u0 < base) sc[u0] = KEPT;
            if (has1 && (int)u1 < base) sc[u1] = KEPT;
        }
        __syncwarp();
    }
    // Forward: kept instructions numbered by ballots; a replaced one takes its winner's new
    // index — a winner before the batch is final, one in the batch is kept (its number) or
    // replaced in turn (pointer jumping by shuffles, 5 rounds for chains of up to 32); then
    // the new SSA instructions written by their lanes.
    unsigned long long* dst = next_pool + (size_t)b * stride;
    u32* dargs = next_args + (size_t)b * stride;
    u32 cnt = 0, kept = 0;
    for (u32 base = 0; base < len; base += 32) {
        u32 i = base + lane;
        u32 v = i < len ? sc[i] : 0;
        u32 op = i < len ? (u32)(pool[off + i] & 0xffff) : 0;
        bool keep = v == KEPT;
        u32 km = __ballot_sync(ALL, keep);
        u32 mine = cnt + __popc(km & ((1u << lane) - 1));
        kept += __popc(__ballot_sync(ALL, keep && is_choice(op)));
        cnt += __popc(km);
        bool replaced = v >= REPLACED;
        u32 w = v & 0xffff;
        bool inside = replaced && w >= base;
        // done: res is the final new index; else ptr is the lane whose result is ours.
        bool done = !inside;
        u32 res = keep ? mine : (replaced && !inside ? sc[w] & 0xffff : 0);
        u32 ptr = inside ? w - base : lane;
        for (u32 r = 0; r < 5; r++) {
            bool d2 = __shfl_sync(ALL, done || keep, ptr);
            u32 r2 = __shfl_sync(ALL, res, ptr), p2 = __shfl_sync(ALL, ptr, ptr);
            if (!done) {
                if (d2) { res = r2; done = true; }
                else ptr = p2;
            }
        }
        if (keep) sc[i] = KEPT | mine;
        if (replaced) sc[i] = REPLACED | res;
        __syncwarp();
        if (keep) {
            u32 a = args[off + i] & 0xffff, c = args[off + i] >> 16;
            u32 ar = arity(op);
            if (ar >= 1) a = sc[a] & 0xffff;
            if (ar == 2) c = sc[c] & 0xffff; else if (ar == 1) c = 0;
            dst[mine] = op;
            dargs[mine] = a | (c << 16);
        }
        __syncwarp();
    }
    // Slots: by the warp where its scratch holds group_slots' (3 cnt + 1 words), else on
    // lane 0 by the backward scan (sc now by new instruction); the same count either way.
    u32 used = 0;
    if (3 * cnt + 1 <= stride) {
        used = group_slots(WarpGroup{}, cnt, dst, dargs, sc, sc + cnt,
                           (unsigned short*)(sc + 2 * cnt + 1));
    } else if (lane == 0) {
        used = slot_scan(sc, cnt, [&](u32 j) { return (u32)(dst[j] & 0xffff); },
                         [&](u32 j) { return dargs[j]; }, dst);
    }
    __syncwarp();
    used = __shfl_sync(0xffffffffu, used, 0);
    if (lane == 0) {
        if (used > NSLOTS) atomicOr(&counts[6], 1u);
        atomicMax(&counts[4], cnt);
        atomicMax(&counts[5], kept);
    }
    // A tape needing more slots than the interpreter has is never run (its children none).
    bool fits = used <= NSLOTS;
    write_children(next_work, b, k, r, q, lz, fits ? next_rows : 0, fits ? next_cols : 0,
                   next_layers, depth, b * stride, cnt, lane, 32);
}

// The first level's tape by depth, for a block: f(rec[j]) for this thread's records j of
// each depth d (lv[d] + rank, + size, ... below lv[d + 1]), the depths in order (or backward),
// a barrier after each. A record is an instruction in depth order: its index, operation,
// SSA operands and choice index (Prepared::new in tape/gpu.rs). Each record is loaded before
// the one before it is used, and a depth's first before the barrier that ends the depth
// before: one memory latency per depth hidden behind the work, not two in its way.
template <typename F>
__device__ __forceinline__ void by_depth(const uint4* __restrict__ rec, const u32* lv, u32 nlv,
                                         bool backward, F f)
{
    u32 tid = threadIdx.x, nt = blockDim.x;
    const uint4 none = make_uint4(0, 0, 0, 0);
    if (nlv == 0) return;
    u32 d = backward ? nlv - 1 : 0;
    u32 lo = lv[d], hi = lv[d + 1];
    uint4 r = lo + tid < hi ? __ldg(&rec[lo + tid]) : none;
    for (u32 e = 0; e < nlv; e++) {
        u32 nlo = 0, nhi = 0;
        if (e + 1 < nlv) {
            u32 dn = backward ? d - 1 : d + 1;
            nlo = lv[dn];
            nhi = lv[dn + 1];
            d = dn;
        }
        uint4 next = nlo + tid < nhi ? __ldg(&rec[nlo + tid]) : none;
        for (u32 j = lo + tid; j < hi; j += nt) {
            uint4 rn = j + nt < hi ? __ldg(&rec[j + nt]) : none;
            f(r);
            r = rn;
        }
        __syncthreads();
        lo = nlo;
        hi = nhi;
        r = next;
    }
}

// The first level, where every tile runs the whole tape: one block per tile (work item
// blockIdx.x), the tape evaluated depth by depth (by_depth: rec in depth order, lv[d] where
// depth d starts), each value in shared memory at its instruction's index (SSA), choices
// recorded at their index in tape order, tile by tile (tile t's row of total_choices bytes
// from t * total_choices, which ivjit_tape_root_prune reads whole; ivjit_tape_eval's lists
// are choice by choice). The same operations, the same bits.
extern "C" __global__ void ivjit_tape_root_eval(
    u32 n, const u32* work, const u32* recs, const T* consts, const u32* lv, u32 nlv,
    u32 total_choices, unsigned char* choices, u32* n_choices, int record,
    GRID_PARAMS, u32 tile, u32 width, u32 height,
    double az1_lo, double az0_lo, double az1_hi, double az0_hi, u32 depth, u32* heights,
    unsigned char* item_cls,
    unsigned char* cls, u32 cols, u32* boundary, u32* counts, unsigned long long* length)
{
    extern __shared__ unsigned char shared_bytes[];
    Iv* val = (Iv*)shared_bytes;
    u32 t = blockIdx.x;
    if (t >= n) return;
    u32 rw = work[4 * t], q = work[4 * t + 1], len = work[4 * t + 3];
    u32 r = row_of(rw, depth), lz = layer_of(rw, depth);
    Iv x, y;
    tile_box(r, q, tile, width, height, GRID_ARGS, &x, &y);
    Iv z = depth ? layer_box(lz, tile, depth, az1_lo, az0_lo, az1_hi, az0_hi) : y;
    by_depth((const uint4*)recs, lv, nlv, false, [&](uint4 e) {
        u32 i = e.x, op = e.y, kind = op & 0xff;
        u32 ia = e.z & 0xffff, ib = e.z >> 16;
        unsigned char ch = 0;
        Iv v;
        if (kind == OP_CONST) { v.lo = consts[2 * ia]; v.hi = consts[2 * ia + 1]; }
        else if (kind == OP_VAR) v = ia == 0 ? x : (ia == 1 ? y : z);
        else v = step(op, val[ia], val[arity(op) == 2 ? ib : ia], &ch);
        if (record && is_choice(op)) choices[(size_t)t * total_choices + e.w] = ch;
        val[i] = v;
    });
    if (threadIdx.x == 0) {
        Iv v = val[len - 1];
        unsigned char c = v.lo > (T)0 ? 0 : (v.hi < (T)0 ? 1 : 2);
        mark(c, record, r, q, lz, tile, cols, height, depth, cls, heights);
        if (item_cls) item_cls[t] = c;
        atomicAdd(&counts[1 + c], 1);
        atomicAdd(length, (unsigned long long)len);
        if (record) n_choices[t] = total_choices;
        if (c == 2 && record) boundary[atomicAdd(&counts[0], 1)] = t;
    }
}

// ivjit_tape_prune for the first level's tiles, one block per boundary tile, depth by depth:
// the liveness backward, new indices by a block-wide prefix sum, replaced instructions
// resolved forward, the new SSA tape written in parallel; then the block gives it slots
// (group_slots).
extern "C" __global__ void ivjit_tape_root_prune(
    u32 nb, const u32* boundary, u32 n, const u32* work, const unsigned long long* pool,
    const u32* args, const u32* recs, const u32* lv, u32 nlv, u32 total_choices,
    const unsigned char* choices, u32 stride, unsigned long long* next_pool, u32* next_args,
    u32 k, u32 next_rows, u32 next_cols, u32 next_layers, u32 depth, const u32* heights,
    u32 cols, u32 tile, u32* next_work, u32* counts)
{
    const u32 KEPT = 1u << 16, REPLACED = 2u << 16;
    extern __shared__ unsigned char shared_bytes[];
    u32* part = (u32*)shared_bytes;          // the block scans' scratch (blockDim.x + 1 words)
    u32* sc = part + blockDim.x + 1;         // state << 16 | index, per instruction
    u32 b = blockIdx.x;
    u32 nbr = capacity_of(counts, nb, children(k, depth));
    if (b >= nbr) return;
    u32 t = boundary[b];
    u32 rw = work[4 * t], q = work[4 * t + 1], len = work[4 * t + 3];
    u32 r = row_of(rw, depth), lz = layer_of(rw, depth);
    if (occluded(r, q, lz, tile, cols, depth, heights)) {
        // Below a filled tile of its column (the block's return is uniform): no children.
        write_children(next_work, b, k, r, q, lz, 0, 0, 0, depth, 0, 0, threadIdx.x, blockDim.x);
        return;
    }
    u32* nop = sc + len;                     // scratch of the slots: len + 1 words,
    u32* narg = nop + len + 1;               // and len words
    u32 tid = threadIdx.x, nt = blockDim.x;
    // The tile's choices (one row of total_choices bytes: ivjit_tape_root_eval's layout),
    // gathered into shared memory first (nop's words: free until the slots; a tape has no
    // more choices than instructions), the loads coalesced and all in flight at once.
    unsigned char* ch_of = (unsigned char*)nop;
    const unsigned char* row = choices + (size_t)t * total_choices;
    for (u32 k = tid; k < total_choices; k += nt) ch_of[k] = row[k];
    for (u32 i = tid; i < len; i += nt) sc[i] = 0;
    __syncthreads();
    if (tid == 0) sc[len - 1] = KEPT;
    __syncthreads();
    const uint4* rec = (const uint4*)recs;
    // Backward by depth: an instruction's users are deeper, so its state is final here.
    by_depth(rec, lv, nlv, true, [&](uint4 e) {
        u32 i = e.x;
        if (sc[i] == 0) return;
        u32 op = e.y, a = e.z & 0xffff, c = e.z >> 16;
        unsigned char ch = is_choice(op) ? ch_of[e.w] : 0;
        if (ch == 1 || ch == 2) {
            u32 wv = ch == 1 ? a : c;
            sc[i] = REPLACED | wv;
            sc[wv] = sc[wv] == 0 ? KEPT : sc[wv];
            return;
        }
        u32 ar = arity(op);
        if (ar >= 1 && sc[a] == 0) sc[a] = KEPT;
        if (ar == 2 && sc[c] == 0) sc[c] = KEPT;
    });
    // New indices: kept instructions in tape order, by a prefix sum over thread chunks.
    u32 chunk = (len + nt - 1) / nt, lo = min(tid * chunk, len), hi = min(lo + chunk, len);
    u32 mine = 0, my_choices = 0;
    for (u32 i = lo; i < hi; i++)
        if (sc[i] == KEPT) { mine++; my_choices += is_choice((u32)(pool[i] & 0xffff)); }
    // (Block-wide scans: one thread summing 512 partial counts took microseconds.)
    BlockGroup block{part};
    u32 cnt;
    u32 base = block.excl_scan(mine, &cnt);
    for (u32 i = lo; i < hi; i++)
        if (sc[i] == KEPT) sc[i] = KEPT | base++;
    __syncthreads();
    if (cnt > stride) {
        // A replayed frame's capacity was short (the block's return is uniform): no children.
        if (tid == 0) atomicOr(&counts[6], 2u);
        write_children(next_work, b, k, r, q, lz, 0, 0, 0, depth, 0, 0, tid, nt);
        return;
    }
    // Replaced instructions take their winner's new index, shallow first.
    by_depth(rec, lv, nlv, false, [&](uint4 e) {
        u32 i = e.x, v = sc[i];
        if (v >= REPLACED) sc[i] = REPLACED | (sc[v & 0xffff] & 0xffff);
    });
    // The new SSA tape.
    unsigned long long* dst = next_pool + (size_t)b * stride;
    u32* dargs = next_args + (size_t)b * stride;
    for (u32 i = tid; i < len; i += nt) {
        u32 v = sc[i];
        if (v == 0 || v >= REPLACED) continue;
        u32 op = (u32)(pool[i] & 0xffff);
        u32 a = args[i] & 0xffff, c = args[i] >> 16;
        u32 ar = arity(op);
        if (ar >= 1) a = sc[a] & 0xffff;
        if (ar == 2) c = sc[c] & 0xffff; else if (ar == 1) c = 0;
        dst[v & 0xffff] = op;
        dargs[v & 0xffff] = a | (c << 16);
    }
    // The choices kept, summed over the threads.
    __syncthreads();
    u32 kept;
    block.excl_scan(my_choices, &kept);
    // Slots by the whole block (the new tape is in dst and dargs, visible to the block after
    // the barrier; sc, nop and narg are free again).
    u32 used = group_slots(BlockGroup{part}, cnt, dst, dargs, sc, nop, (unsigned short*)narg);
    if (tid == 0) {
        if (used > NSLOTS) atomicOr(&counts[6], 1u);
        atomicMax(&counts[4], cnt);
        atomicMax(&counts[5], kept);
    }
    bool fits = used <= NSLOTS;
    write_children(next_work, b, k, r, q, lz, fits ? next_rows : 0, fits ? next_cols : 0,
                   next_layers, depth, b * stride, cnt, tid, nt);
}

// The depth map of a 3-D search: per column (i, j) of the width x height grid, the most of
// the heights its tile at each level marked (levels: per level its tile size, columns and
// the offset of its heights in hs); with normals (not null), each column's three set to NaN
// (ivjit_tape_normals writes the certified ones).
extern "C" __global__ void ivjit_tape_heights(const u32* hs, const u32* levels, u32 nlevels,
                                              u32 width, u32 height, u32* out, double* normals)
{
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= (size_t)width * height) return;
    u32 i = (u32)(p / width), j = (u32)(p % width), m = 0;
    for (u32 l = 0; l < nlevels; l++) {
        u32 s = levels[3 * l], cols = levels[3 * l + 1], off = levels[3 * l + 2];
        m = max(m, hs[off + (size_t)(i / s) * cols + j / s]);
    }
    out[p] = m;
    if (normals)
        for (int k = 0; k < 3; k++) normals[3 * p + k] = __longlong_as_double(-1ll);
}

// A value and its partials along variables 0, 1 and 2 (src/search/tape/gradient.rs).
struct Dual { Iv v[4]; };

// The tape's value and gradient on one box by forward differentiation: the rules of
// src/search/tape/gradient.rs, each composed of the generated operations (the same bits as
// the CPU's Tape::gradient_lanes).
__device__ Dual tape_gradient(const unsigned long long* tp, u32 len, const T* consts, Iv x,
                              Iv y, Iv z)
{
    Dual s[NSLOTS];
    const Iv zero = { (T)0, (T)0 }, one = { (T)1, (T)1 };
    const T inf = (T)__int_as_float(0x7f800000);
    const Iv entire = { -inf, inf };
    for (u32 i = 0; i < len; i++) {
        unsigned long long ins = tp[i];
        u32 op = (u32)(ins & 0xffff), o = (u32)((ins >> 16) & 0xffff);
        u32 ia = (u32)((ins >> 32) & 0xffff), ib = (u32)(ins >> 48);
        u32 kind = op & 0xff;
        Dual r;
        if (kind == OP_CONST) {
            r.v[0].lo = consts[2 * ia]; r.v[0].hi = consts[2 * ia + 1];
            for (int k = 1; k < 4; k++) r.v[k] = zero;
        } else if (kind == OP_VAR) {
            r.v[0] = ia == 0 ? x : (ia == 1 ? y : z);
            for (int k = 1; k < 4; k++) r.v[k] = (u32)k == 1 + ia ? one : zero;
        } else {
            Dual a = s[ia], b = s[ib];
#if EXTENDED > 0
            if (kind >= OP_EXT) {
                // The value by the lowering, the partials by the operation's rule.
                Iv v = op_ext(kind, a.v[0], b.v[0]);
                u32 rule = ext_rule(kind);
                r.v[0] = v;
                for (int k = 1; k < 4; k++)
                    r.v[k] = rule == 1 ? op_div(op_sub(a.v[k], op_mul(v, b.v[k])), b.v[0])
                             : rule == 2 ? op_mul(v, a.v[k])
                             : rule == 3 ? op_div(a.v[k], a.v[0]) : entire;
            } else
#endif
            switch (kind) {
            case OP_NEG: for (int k = 0; k < 4; k++) r.v[k] = op_neg(a.v[k]); break;
            case OP_ADD: for (int k = 0; k < 4; k++) r.v[k] = op_add(a.v[k], b.v[k]); break;
            case OP_SUB: for (int k = 0; k < 4; k++) r.v[k] = op_sub(a.v[k], b.v[k]); break;
            case OP_MUL:
                r.v[0] = op_mul(a.v[0], b.v[0]);
                for (int k = 1; k < 4; k++)
                    r.v[k] = op_add(op_mul(a.v[0], b.v[k]), op_mul(b.v[0], a.v[k]));
                break;
            case OP_SQR: {
                Iv twice = op_add(a.v[0], a.v[0]);
                r.v[0] = op_sqr(a.v[0]);
                for (int k = 1; k < 4; k++) r.v[k] = op_mul(twice, a.v[k]);
                break;
            }
            case OP_SQRT: {
                Iv q = op_sqrt(a.v[0]);
                Iv twice = op_add(q, q);
                r.v[0] = q;
                for (int k = 1; k < 4; k++) r.v[k] = op_div(a.v[k], twice);
                break;
            }
            case OP_ABS:
                r.v[0] = op_abs(a.v[0]);
                for (int k = 1; k < 4; k++) {
                    Iv minus = op_neg(a.v[k]);
                    r.v[k] = a.v[0].lo > (T)0 ? a.v[k]
                             : (a.v[0].hi < (T)0 ? minus : op_hull(a.v[k], minus));
                }
                break;
            default: {
                // min / max: the deciding side's partials (step's test), else the hull.
                unsigned char ch = 0;
                r.v[0] = step(op, a.v[0], b.v[0], &ch);
                for (int k = 1; k < 4; k++)
                    r.v[k] = ch == 1 ? a.v[k] : (ch == 2 ? b.v[k] : op_hull(a.v[k], b.v[k]));
            }
            }
        }
        s[o] = r;
    }
    return s[OUT_SLOT];
}

// The normal the partials' enclosures certify (src/search/tape/gradient.rs's
// certified_normal, the same operations in the same order, each correctly rounded to nearest
// and none contracted): the unit direction of their middle where one keeps its sign, else
// NaN. Into out[0..3].
__device__ void certified_normal(const Dual& d, double* out)
{
    bool sign = false;
    double m[3];
    for (int k = 0; k < 3; k++) {
        double lo = (double)d.v[1 + k].lo, hi = (double)d.v[1 + k].hi;
        sign |= lo > 0.0 || hi < 0.0;
        m[k] = __dadd_rn(__dmul_rn(0.5, lo), __dmul_rn(0.5, hi));
    }
    double len = __dsqrt_rn(__dadd_rn(__dadd_rn(__dmul_rn(m[0], m[0]), __dmul_rn(m[1], m[1])),
                                      __dmul_rn(m[2], m[2])));
    bool ok = sign && isfinite(len) && len > 0.0;
    for (int k = 0; k < 3; k++) out[k] = ok ? __ddiv_rn(m[k], len) : __longlong_as_double(-1ll);
}

// Certified normals (src/search/voxels.rs, render_with_normals): for each filled tile of a
// level (item_cls: 1, or 2 at the last level) and each column of its footprint whose height
// in the depth map is the tile's top, the tape's gradient on the column's top voxel and the
// unit normal it certifies into normals[3 p ..] (p the column; ivjit_tape_heights set every
// column's to NaN first).
extern "C" __global__ void ivjit_tape_normals(
    u32 n, const u32* n_dev, const u32* work, const unsigned long long* pool, const T* consts,
    const unsigned char* item_cls, int last,
    GRID_PARAMS, u32 tile, u32 width, u32 height,
    double az1_lo, double az0_lo, double az1_hi, double az0_hi, u32 depth,
    const u32* map, double* normals)
{
    u32 m = n_dev ? min(*n_dev, n) : n;
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < m; t += gridDim.x * blockDim.x) {
        u32 rw = work[4 * t];
        if (rw == 0xffffffffu) continue;
        unsigned char c = item_cls[t];
        if (!(c == 1 || (c == 2 && last))) continue;
        u32 r = row_of(rw, depth), lz = layer_of(rw, depth), q = work[4 * t + 1];
        u32 off = work[4 * t + 2], len = work[4 * t + 3];
        u32 top = depth - lz * tile;
        for (u32 i = r * tile; i < min((r + 1) * tile, height); i++) {
            for (u32 j = q * tile; j < min((q + 1) * tile, width); j++) {
                size_t p = (size_t)i * width + j;
                if (map[p] != top) continue;
                Iv x, y;
                tile_box(i, j, 1, width, height, GRID_ARGS, &x, &y);
                Iv z = layer_box(lz * tile, 1, depth, az1_lo, az0_lo, az1_hi, az0_hi);
                Dual d = tape_gradient(pool + off, len, consts, x, y, z);
                certified_normal(d, normals + 3 * p);
            }
        }
    }
}
