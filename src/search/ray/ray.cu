// ivjit ray search kernel: src/search/ray/ray.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of)
// and the #defines of ray.rs (RAY_STACK, RAY_BLOCK).
extern "C" __device__ void ivjit_eval(const T* in, T* out);

// One thread per ray: a list's rays[5r..] = u, v, t0, t1, min_width, or (is_grid) the
// grid's ray made here as search::ray::Grid::ray makes it, for the part's r-th ray: the
// grid's ray g of blocks of RAY_BLOCK dealt round-robin to `parts` parts (ray::gpu::Deal).
// status[r]: 0 no root, 1 hit (hits[2r], hits[2r+1]), 2 stack exhausted (finish it
// elsewhere).
extern "C" __global__ void ivjit_search_rays(
    u32 n, u32 is_grid, const double* rays,
    u32 grid_width, u32 part, u32 parts, double x0, double dx, double y1, double dy,
    double t0, double t1, double grid_min_width,
    u32 split, int kt, int ku, int kv,
    double* hits, u32* status, u64* boxes)
{
    u64 evaluated = 0;
    double frac[33], pts[33];
    for (u32 k = 0; k <= split; k++) frac[k] = __ddiv_rn((double)k, (double)split);
    for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += gridDim.x * blockDim.x) {
        double st_lo[RAY_STACK], st_hi[RAY_STACK];
        double u, v, min_width;
        if (is_grid) {
            u64 g = ((u64)(r / RAY_BLOCK) * parts + part) * RAY_BLOCK + r % RAY_BLOCK;
            u = __dadd_rn(x0, __dmul_rn((double)(g % grid_width) + 0.5, dx));
            v = __dadd_rn(y1, -__dmul_rn((double)(g / grid_width) + 0.5, dy));
            min_width = grid_min_width;
            st_lo[0] = t0; st_hi[0] = t1;
        } else {
            u = rays[5 * r]; v = rays[5 * r + 1]; min_width = rays[5 * r + 4];
            st_lo[0] = rays[5 * r + 2]; st_hi[0] = rays[5 * r + 3];
        }
        T in[6], out[2];
        if (ku >= 0) { in[2 * ku] = lo_of(u); in[2 * ku + 1] = hi_of(u); }
        if (kv >= 0) { in[2 * kv] = lo_of(v); in[2 * kv + 1] = hi_of(v); }
        int top = 1;
        u32 result = 0;
        while (true) {
            top--;
            double lo = st_lo[top], hi = st_hi[top];
            // The split points, as search::ray::piece computes them: the ends exact, the
            // inner ones lo + (hi - lo) * (k / split) rounded to nearest.
            double width = __dadd_rn(hi, -lo);
            pts[0] = lo;
            pts[split] = hi;
            for (u32 k = 1; k < split; k++) pts[k] = __dadd_rn(lo, __dmul_rn(width, frac[k]));
            // Evaluate every piece first, then push the candidates back to front, as the
            // CPU does.
            u32 keep = 0; // bit k: piece k may hold a root (split <= 32)
            for (u32 k = 0; k < split; k++) {
                if (kt >= 0) {
                    in[2 * kt] = lo_of(pts[k]);
                    in[2 * kt + 1] = hi_of(pts[k + 1]);
                }
                ivjit_eval(in, out);
                evaluated++;
                if (out[0] <= (T)0 && (T)0 <= out[1]) keep |= 1u << k;
            }
            if (top + __popc(keep) > RAY_STACK) { result = 2; break; }
            for (int k = (int)split - 1; k >= 0; k--)
                if (keep >> k & 1) {
                    st_lo[top] = pts[k];
                    st_hi[top] = pts[k + 1];
                    top++;
                }
            if (top == 0) break;
            double a = st_lo[top - 1], b = st_hi[top - 1];
            if (__dadd_rn(b, -a) <= min_width || b <= a) {
                hits[2 * r] = a; hits[2 * r + 1] = b; result = 1;
                break;
            }
        }
        status[r] = result;
    }
    // One atomic per warp.
    for (int d = 16; d > 0; d /= 2) evaluated += __shfl_down_sync(0xffffffffu, evaluated, d);
    if ((threadIdx.x & 31) == 0) atomicAdd(boxes, evaluated);
}
