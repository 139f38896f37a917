// ivjit exclusion kernels: src/search/exclude/exclude.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of).

// search::exclude::fate for every box: dropped; final (to done, after done_base; st[1] counts
// this round's); or halved along its last widest side (to next; st[0] counts boxes). st[2],
// st[3]: set when next or done would overflow (the host then undoes the round).
extern "C" __global__ void ivjit_ex_split(
    u32 n, u32 nv, const double* list, const T* out, double level, double tol, u64* st,
    double* next, u32 cap, double* done, u64 done_base, u64 done_cap)
{
    u32 lane = threadIdx.x & 31;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double flo = (double)out[i], fhi = (double)out[(size_t)n + i];
        bool live = flo <= level && level <= fhi;
        const double* b = list + 2 * (size_t)i * nv;
        bool split = false;
        u32 w = 0;
        double m = 0;
        if (live) {
            bool all_small = true;
            for (u32 k = 0; k < nv; k++) {
                double lo = b[2 * k], hi = b[2 * k + 1];
                double scale = fmax(fmax(fabs(lo), fabs(hi)), 1.0);
                if (!(__dadd_rn(hi, -lo) <= __dmul_rn(tol, scale))) all_small = false;
                if (__dadd_rn(hi, -lo) >= __dadd_rn(b[2 * w + 1], -b[2 * w])) w = k;
            }
            if (!all_small) {
                double lo = b[2 * w], hi = b[2 * w + 1];
                m = __dadd_rn(__dmul_rn(0.5, lo), __dmul_rn(0.5, hi));
                split = lo < m && m < hi;
            }
        }
        bool final_box = live && !split;
        // One atomic per warp for each list.
        u32 active = __activemask();
        u32 halves = __ballot_sync(active, split), finals = __ballot_sync(active, final_box);
        u32 leader = __ffs(active) - 1;
        u64 nb = 0, db = 0;
        if (lane == leader) {
            if (halves) nb = atomicAdd(&st[0], 2ull * __popc(halves));
            if (finals) db = atomicAdd(&st[1], (u64)__popc(finals));
        }
        nb = __shfl_sync(active, nb, leader);
        db = __shfl_sync(active, db, leader);
        u32 below = (1u << lane) - 1;
        if (split) {
            u64 at = nb + 2ull * __popc(halves & below);
            if (at + 2 > cap) { st[2] = 1; continue; }
            double* left = next + 2 * (size_t)at * nv;
            double* right = left + 2 * nv;
            for (u32 k = 0; k < 2 * nv; k++) { left[k] = b[k]; right[k] = b[k]; }
            left[2 * w + 1] = m;
            right[2 * w] = m;
        } else if (final_box) {
            u64 at = done_base + db + __popc(finals & below);
            if (at + 1 > done_cap) { st[3] = 1; continue; }
            for (u32 k = 0; k < 2 * nv; k++) done[2 * at * nv + k] = b[k];
        }
    }
}
