// ivjit ray search kernel: src/search/ray/ray.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of)
// and the #defines of ray/gpu.rs (RAY_STACK, RAY_BLOCK, and where a search's rays come from,
// the kernel's `source`: RAYS_LIST, rays[5r..] = u, v, t0, t1, min_width; RAYS_GRID,
// search::ray::Grid's, made here for the part's r-th ray; RAYS_CAMERA, search::trace's
// pinhole camera, rays = its numbers, below).
extern "C" __device__ void ivjit_eval(const T* in, T* out);

__device__ __forceinline__ double dot3(const double* a, const double* b) {
    return __dadd_rn(__dadd_rn(__dmul_rn(a[0], b[0]), __dmul_rn(a[1], b[1])), __dmul_rn(a[2], b[2]));
}

// The camera's numbers: eye[3], forward[3], right[3], up[3], center[3], radius, steps, step
// (the shading's). Pixel p of a w x h image: its screen coordinates u, v and direction d, as
// search::trace's Camera::screen and Camera::direction compute them, operation for operation.
__device__ __forceinline__ void camera_ray(const double* cam, u32 p, u32 w, u32 h,
                                           double* u, double* v, double* d) {
    u32 col = p % w, row = p / w;
    double aspect = __ddiv_rn((double)w, (double)h);
    *u = __dmul_rn(__dadd_rn(__dmul_rn(__ddiv_rn(__dadd_rn((double)col, 0.5), (double)w), 2.0), -1.0), aspect);
    *v = __dadd_rn(1.0, -__dmul_rn(__ddiv_rn(__dadd_rn((double)row, 0.5), (double)h), 2.0));
    for (int k = 0; k < 3; k++)
        d[k] = __dadd_rn(__dadd_rn(cam[3 + k], __dmul_rn(*u, cam[6 + k])), __dmul_rn(*v, cam[9 + k]));
}

// search::trace::clip, operation for operation: false when the ray misses the ball.
__device__ __forceinline__ bool camera_clip(const double* cam, const double* d, double* t0,
                                            double* t1) {
    double o[3];
    for (int k = 0; k < 3; k++) o[k] = __dadd_rn(cam[k], -cam[12 + k]);
    double radius = cam[15];
    double a = dot3(d, d), b = dot3(o, d);
    double c = __dadd_rn(dot3(o, o), -__dmul_rn(radius, radius));
    double disc = __dadd_rn(__dmul_rn(b, b), -__dmul_rn(a, c));
    if (!(disc >= 0.0)) return false;
    double s = __dsqrt_rn(disc);
    double lo = __ddiv_rn(__dadd_rn(-b, -s), a);
    double hi = __ddiv_rn(__dadd_rn(-b, s), a);
    if (hi <= 0.0) return false;
    double pad = __dmul_rn(1e-9, __dadd_rn(fabs(lo), fabs(hi)));
    *t0 = fmax(__dadd_rn(lo, -pad), 0.0);
    *t1 = __dadd_rn(hi, pad);
    return true;
}

// One thread searches one ray at a time; a warp's lanes without a ray take the warp's next
// claimed rays at every step (the warp claims 32 more from boxes[2] when they run out), so
// that a lane whose ray ended does not wait for the warp's longest ray (a warp of 32 fixed
// rays kept its lanes busy 45-63 % of the time on the four Table 5 surfaces).
// The rays (`source`): a list, or a grid's for the part's r-th ray (the grid's ray g of blocks
// of RAY_BLOCK dealt round-robin to `parts` parts, ray::gpu::Deal) made here as
// search::ray::Grid::ray makes it, or a camera's pixel r (grid_width = w, n = w h) clipped to
// its ball (a ray that misses it has status 0).
// status[r]: 0 no root, 1 hit (hits[2r], hits[2r+1]), 2 stack exhausted (finish it elsewhere).
// boxes[0]: boxes evaluated; boxes[1]: rays of status 2; boxes[2]: the next unclaimed ray.
// All three start at 0.
extern "C" __global__ void ivjit_search_rays(
    u32 n, u32 source, const double* rays,
    u32 grid_width, u32 part, u32 parts, double x0, double dx, double y1, double dy,
    double t0, double t1, double grid_min_width,
    u32 split, int kt, int ku, int kv,
    double* hits, u32* status, u64* boxes)
{
    const u32 all = 0xffffffffu;
    const u32 lane = threadIdx.x & 31, below = (1u << lane) - 1;
    u64 evaluated = 0;
    double frac[33], pts[33];
    for (u32 k = 0; k <= split; k++) frac[k] = __ddiv_rn((double)k, (double)split);
    double st_lo[RAY_STACK], st_hi[RAY_STACK];
    T in[6], out[2];
    u32 claimed = 0, claimed_end = 0; // the warp's claimed rays not started yet (warp-uniform)
    bool drained = false;             // no ray left to claim (warp-uniform)
    bool busy = false;                // this lane is searching ray r
    u32 r = 0;
    int top = 0;
    double min_width = 0;
    while (true) {
        while (!drained) {
            u32 idle = __ballot_sync(all, !busy);
            if (idle == 0) break;
            if (claimed == claimed_end) {
                u64 base = 0;
                if (lane == 0) base = atomicAdd(boxes + 2, (u64)32);
                base = __shfl_sync(all, base, 0);
                if (base >= n) { drained = true; break; }
                claimed = (u32)base;
                claimed_end = (u32)min(base + 32, (u64)n);
            }
            u32 take = min((u32)__popc(idle), claimed_end - claimed);
            u32 rank = __popc(idle & below);
            if (!busy && rank < take) {
                r = claimed + rank;
                double u, v;
                busy = true;
                if (source == RAYS_GRID) {
                    u64 g = ((u64)(r / RAY_BLOCK) * parts + part) * RAY_BLOCK + r % RAY_BLOCK;
                    u = __dadd_rn(x0, __dmul_rn((double)(g % grid_width) + 0.5, dx));
                    v = __dadd_rn(y1, -__dmul_rn((double)(g / grid_width) + 0.5, dy));
                    min_width = grid_min_width;
                    st_lo[0] = t0; st_hi[0] = t1;
                } else if (source == RAYS_CAMERA) {
                    double d[3], a, b;
                    camera_ray(rays, r, grid_width, n / grid_width, &u, &v, d);
                    busy = camera_clip(rays, d, &a, &b);
                    if (busy) {
                        min_width = __ddiv_rn(__dadd_rn(b, -a), rays[16]);
                        st_lo[0] = a; st_hi[0] = b;
                    } else {
                        status[r] = 0;
                    }
                } else {
                    u = rays[5 * r]; v = rays[5 * r + 1]; min_width = rays[5 * r + 4];
                    st_lo[0] = rays[5 * r + 2]; st_hi[0] = rays[5 * r + 3];
                }
                top = 1;
                if (ku >= 0) { in[2 * ku] = lo_of(u); in[2 * ku + 1] = hi_of(u); }
                if (kv >= 0) { in[2 * kv] = lo_of(v); in[2 * kv + 1] = hi_of(v); }
            }
            claimed += take;
        }
        if (__ballot_sync(all, busy) == 0) break; // drained, every lane idle
        if (!busy) continue;
        // One step of the ray's search.
        top--;
        double lo = st_lo[top], hi = st_hi[top];
        // The split points, as search::ray::piece computes them: the ends exact, the inner
        // ones lo + (hi - lo) * (k / split) rounded to nearest.
        double width = __dadd_rn(hi, -lo);
        pts[0] = lo;
        pts[split] = hi;
        for (u32 k = 1; k < split; k++) pts[k] = __dadd_rn(lo, __dmul_rn(width, frac[k]));
        // Evaluate every piece first, then push the candidates back to front, as the CPU does.
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
        if (top + __popc(keep) > RAY_STACK) {
            status[r] = 2;
            atomicAdd(boxes + 1, (u64)1); // rare: the host looks for them if any
            busy = false;
            continue;
        }
        for (int k = (int)split - 1; k >= 0; k--)
            if (keep >> k & 1) {
                st_lo[top] = pts[k];
                st_hi[top] = pts[k + 1];
                top++;
            }
        if (top == 0) {
            status[r] = 0;
            busy = false;
            continue;
        }
        double a = st_lo[top - 1], b = st_hi[top - 1];
        if (__dadd_rn(b, -a) <= min_width || b <= a) {
            hits[2 * (size_t)r] = a; hits[2 * (size_t)r + 1] = b;
            status[r] = 1;
            busy = false;
        }
    }
    // One atomic per warp.
    for (int d = 16; d > 0; d /= 2) evaluated += __shfl_down_sync(all, evaluated, d);
    if (lane == 0) atomicAdd(boxes, evaluated);
}
