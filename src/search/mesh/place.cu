// ivjit mesh placement kernel: src/search/mesh/place.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of).
extern "C" __device__ void ivjit_eval(const T* in, T* out);

// The middle of a segment's coordinate as lattice.rs's `half` makes it (rounded to nearest,
// no contraction): the sum halved, or each end halved where the sum overflows.
__device__ __forceinline__ double half(double a, double b)
{
    double sum = __dadd_rn(a, b);
    if (isfinite(sum)) return __dmul_rn(0.5, sum);
    return __dadd_rn(__dmul_rn(0.5, a), __dmul_rn(0.5, b));
}

// One thread per vertex of the mesh: brackets[6v..] its end with f < 0 then its other end,
// proven[v] whether f >= 0 is proven at the other end; `steps` bisections on f, as
// lattice.rs's `place` makes them (a middle where f < 0 is proven replaces the first end,
// else the second, proven where f >= 0 is). k[3]: x, y and z's place among the program's
// variables (-1: unused).
extern "C" __global__ void ivjit_mesh_place(
    u32 n, double* brackets, unsigned char* proven, u32 steps, int kx, int ky, int kz)
{
    int k[3] = {kx, ky, kz};
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        double a[3], b[3];
        for (int d = 0; d < 3; d++) { a[d] = brackets[6 * v + d]; b[d] = brackets[6 * v + 3 + d]; }
        unsigned char pr = proven[v];
        T in[6], out[2];
        for (u32 s = 0; s < steps; s++) {
            double m[3];
            for (int d = 0; d < 3; d++) {
                m[d] = half(a[d], b[d]);
                if (k[d] >= 0) { in[2 * k[d]] = lo_of(m[d]); in[2 * k[d] + 1] = hi_of(m[d]); }
            }
            ivjit_eval(in, out);
            if (out[1] < (T)0) {
                for (int d = 0; d < 3; d++) a[d] = m[d];
            } else {
                for (int d = 0; d < 3; d++) b[d] = m[d];
                pr = out[0] >= (T)0;
            }
        }
        for (int d = 0; d < 3; d++) { brackets[6 * v + d] = a[d]; brackets[6 * v + 3 + d] = b[d]; }
        proven[v] = pr;
    }
}

// The witness search (witness.rs's `find`) of one element per thread, for at most 3 levels:
// elems[4e..] = the element's center (half-cell units) and the sign its vertices agree on
// (1: f < 0). Pieces are named by their path of child numbers (base 8, bit d of a digit: the
// upper half along axis d), so a level's pieces in numeric order are the CPU's list order.
// A level evaluates every piece's box, then every open piece's center, as the CPU's batches
// do (the evaluations counted alike); the first piece in order whose box has the other sign
// gives the witness, else the first open piece whose center has it. found[e]: 0 proven,
// 1 witness (its point's fine coordinates in fine[3e..]), 2 unknown.
// ax[2d], ax[2d + 1]: axis d's x0 and x1; units: the fine units of a side.
__device__ __forceinline__ double axis_lo(double x0, double x1, u64 t, u64 units)
{
    double s = (double)t / (double)units;
    return __dadd_rd(__dmul_rd(x0, 1.0 - s), __dmul_rd(x1, s));
}
__device__ __forceinline__ double axis_hi(double x0, double x1, u64 t, u64 units)
{
    double s = (double)t / (double)units;
    return __dadd_ru(__dmul_ru(x0, 1.0 - s), __dmul_ru(x1, s));
}
__device__ __forceinline__ double axis_at(double x0, double x1, u64 t, u64 units)
{
    double s = (double)t / (double)units;
    return __dadd_rn(__dmul_rn(x0, 1.0 - s), __dmul_rn(x1, s));
}

// f's sign on a piece (box) or its center (point): 1 f < 0, 0 f > 0, -1 neither.
__device__ int piece_sign(const u64* lo, const u64* hi, bool point, const double* ax, u64 units,
                          const int* k)
{
    T in[6], out[2];
    for (int d = 0; d < 3; d++) {
        if (k[d] < 0) continue;
        double a, b;
        if (point) {
            u64 c = (lo[d] + hi[d]) / 2;
            a = b = axis_at(ax[2 * d], ax[2 * d + 1], c, units);
        } else {
            a = axis_lo(ax[2 * d], ax[2 * d + 1], lo[d], units);
            b = axis_hi(ax[2 * d], ax[2 * d + 1], hi[d], units);
        }
        in[2 * k[d]] = lo_of(a);
        in[2 * k[d] + 1] = hi_of(b);
    }
    ivjit_eval(in, out);
    return out[1] < (T)0 ? 1 : (out[0] > (T)0 ? 0 : -1);
}

// Piece `path` of level `level`'s span: lo and hi in fine units.
__device__ void piece_span(const u32* m, u64 path, u32 level, u32 levels, u64* lo, u64* hi)
{
    u64 side = 2ull << levels;
    for (int d = 0; d < 3; d++) lo[d] = (u64)(m[d] - m[d] % 2) << levels;
    for (u32 j = 0; j < level; j++) {
        u32 digit = (u32)(path >> (3 * (level - 1 - j))) & 7u;
        side /= 2;
        for (int d = 0; d < 3; d++) if (digit >> d & 1) lo[d] += side;
    }
    for (int d = 0; d < 3; d++) hi[d] = lo[d] + (m[d] % 2 ? side : 0);
}

extern "C" __global__ void ivjit_mesh_witnesses(
    u32 n, const u32* elems, u32 levels, const double* ax, u64 units, int kx, int ky, int kz,
    unsigned char* found, u64* fine, u64* evaluations)
{
    int k[3] = {kx, ky, kz};
    u64 evaluated = 0;
    for (u32 e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x) {
        u32 m[3] = {elems[4 * e], elems[4 * e + 1], elems[4 * e + 2]};
        int s = (int)elems[4 * e + 3];
        // The child digits that split no axis where the element has no extent are invalid.
        u32 fixed = (m[0] % 2 ? 0u : 1u) | (m[1] % 2 ? 0u : 2u) | (m[2] % 2 ? 0u : 4u);
        // The level's parents by path (at most 64: levels <= 3), and its open pieces (<= 512).
        unsigned long long parents = 1ull, open[8];
        unsigned char result = 0;
        u64 lo[3], hi[3];
        for (u32 level = 0; level <= levels; level++) {
            u32 nq = level == 0 ? 1u : 64u, nd = level == 0 ? 1u : 8u;
            for (int w = 0; w < 8; w++) open[w] = 0ull;
            int witness = 0;
            u64 wpath = 0;
            bool any_open = false;
            // Every piece's box, in order: children (digits ascending) of the parents (paths
            // ascending); the first of the other sign is the witness.
            for (u32 q = 0; q < nq; q++) {
                if (level > 0 && !(parents >> q & 1)) continue;
                for (u32 dg = 0; dg < nd; dg++) {
                    if (level > 0 && (dg & fixed)) continue;
                    u64 path = level == 0 ? 0 : (u64)q * 8 + dg;
                    piece_span(m, path, level, levels, lo, hi);
                    int sg = piece_sign(lo, hi, false, ax, units, k);
                    evaluated++;
                    if (sg < 0) {
                        open[path >> 6] |= 1ull << (path & 63);
                        any_open = true;
                    } else if (sg != s && !witness) {
                        witness = 1;
                        wpath = path;
                    }
                }
            }
            // Then every open piece's center, in the same order.
            unsigned long long next = 0ull;
            bool unknown = false;
            if (any_open) {
                for (u32 q = 0; q < nq; q++) {
                    if (level > 0 && !(parents >> q & 1)) continue;
                    for (u32 dg = 0; dg < nd; dg++) {
                        if (level > 0 && (dg & fixed)) continue;
                        u64 path = level == 0 ? 0 : (u64)q * 8 + dg;
                        if (!(open[path >> 6] >> (path & 63) & 1)) continue;
                        piece_span(m, path, level, levels, lo, hi);
                        int sg = piece_sign(lo, hi, true, ax, units, k);
                        evaluated++;
                        if (sg >= 0 && sg != s) {
                            if (!witness) { witness = 2; wpath = path; }
                        } else if (level < levels) {
                            next |= 1ull << path;
                        } else {
                            unknown = true;
                        }
                    }
                }
            }
            if (witness) {
                piece_span(m, wpath, level, levels, lo, hi);
                result = 1;
                for (int d = 0; d < 3; d++) fine[3 * e + d] = (lo[d] + hi[d]) / 2;
                break;
            }
            if (level == levels) { result = unknown ? 2 : 0; break; }
            parents = next;
            if (!parents) break;
        }
        found[e] = result;
    }
    for (int d = 16; d > 0; d /= 2) evaluated += __shfl_down_sync(0xffffffffu, evaluated, d);
    if ((threadIdx.x & 31) == 0) atomicAdd(evaluations, evaluated);
}
