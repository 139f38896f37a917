// ivjit ray-tracing kernel: src/search/trace/trace.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of)
// and the #defines of trace.rs (RAY_STACK).
extern "C" __device__ void ivjit_eval(const T* in, T* out);
extern "C" __device__ void ivjit_surface(const T* in, T* out);

__device__ __forceinline__ double dot3(const double* a, const double* b) {
    return __dadd_rn(__dadd_rn(__dmul_rn(a[0], b[0]), __dmul_rn(a[1], b[1])), __dmul_rn(a[2], b[2]));
}

// cam: eye[3], forward[3], right[3], up[3], center[3], radius, steps, step (shading).
// status[p]: 0 no root (or no ray), 1 hit (hits[2p], hits[2p+1]), 2 stack exhausted.
// boxes[0]: the boxes evaluated; boxes[1]: the rays of status 2.
extern "C" __global__ void ivjit_trace(
    u32 w, u32 h, const double* cam, u32 split, int kt, int ku, int kv, int sx, int sy, int sz,
    double* hits, u32* status, unsigned char* rgb, u64* boxes)
{
    const double* eye = cam; const double* fw = cam + 3; const double* rt = cam + 6;
    const double* up = cam + 9; const double* center = cam + 12;
    double radius = cam[15], steps = cam[16], step = cam[17];
    double frac[33], pts[33];
    for (u32 k = 0; k <= split; k++) frac[k] = __ddiv_rn((double)k, (double)split);
    u64 evaluated = 0;
    u32 n = w * h;
    for (u32 p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
        u32 col = p % w, row = p / w;
        // Camera::screen, Camera::direction and clip, operation for operation.
        double aspect = __ddiv_rn((double)w, (double)h);
        double u = __dmul_rn(__dadd_rn(__dmul_rn(__ddiv_rn(__dadd_rn((double)col, 0.5), (double)w), 2.0), -1.0), aspect);
        double v = __dadd_rn(1.0, -__dmul_rn(__ddiv_rn(__dadd_rn((double)row, 0.5), (double)h), 2.0));
        double d[3], o[3];
        for (int k = 0; k < 3; k++) {
            d[k] = __dadd_rn(__dadd_rn(fw[k], __dmul_rn(u, rt[k])), __dmul_rn(v, up[k]));
            o[k] = __dadd_rn(eye[k], -center[k]);
        }
        double a = dot3(d, d), b = dot3(o, d);
        double c = __dadd_rn(dot3(o, o), -__dmul_rn(radius, radius));
        double disc = __dadd_rn(__dmul_rn(b, b), -__dmul_rn(a, c));
        u32 result = 0;
        double hit_lo = 0, hit_hi = 0;
        bool clipped = disc >= 0.0;
        double t0 = 0, t1 = 0;
        if (clipped) {
            double s = __dsqrt_rn(disc);
            t0 = __ddiv_rn(__dadd_rn(-b, -s), a);
            t1 = __ddiv_rn(__dadd_rn(-b, s), a);
            clipped = !(t1 <= 0.0);
        }
        if (clipped) {
            double pad = __dmul_rn(1e-9, __dadd_rn(fabs(t0), fabs(t1)));
            t0 = fmax(__dadd_rn(t0, -pad), 0.0);
            t1 = __dadd_rn(t1, pad);
            double min_width = __ddiv_rn(__dadd_rn(t1, -t0), steps);
            double st_lo[RAY_STACK], st_hi[RAY_STACK];
            T in[6], out[2];
            if (ku >= 0) { in[2 * ku] = lo_of(u); in[2 * ku + 1] = hi_of(u); }
            if (kv >= 0) { in[2 * kv] = lo_of(v); in[2 * kv + 1] = hi_of(v); }
            st_lo[0] = t0; st_hi[0] = t1;
            int top = 1;
            while (true) {
                top--;
                double lo = st_lo[top], hi = st_hi[top];
                double width = __dadd_rn(hi, -lo);
                pts[0] = lo;
                pts[split] = hi;
                for (u32 k = 1; k < split; k++) pts[k] = __dadd_rn(lo, __dmul_rn(width, frac[k]));
                u32 keep = 0;
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
                double x = st_lo[top - 1], y = st_hi[top - 1];
                if (__dadd_rn(y, -x) <= min_width || y <= x) {
                    hit_lo = x; hit_hi = y; result = 1;
                    break;
                }
            }
        }
        status[p] = result;
        if (result == 2) atomicAdd(boxes + 1, (u64)1); // rare: the host looks for them if any
        hits[2 * (size_t)p] = hit_lo;
        hits[2 * (size_t)p + 1] = hit_hi;
        unsigned char* px = rgb + 3 * (size_t)p;
        if (result != 1) {
            // Background (search::trace::background); stack-exhausted rays are redone on the host.
            double g = 20.0 + 30.0 * (double)row / (double)h;
            px[0] = (unsigned char)g; px[1] = (unsigned char)g; px[2] = (unsigned char)(g + 12.0);
            continue;
        }
        // Shading (search::trace::shade): f at the hit's middle point +- step along each axis.
        double t = 0.5 * hit_lo + 0.5 * hit_hi;
        double x[3], val[6];
        for (int k = 0; k < 3; k++) x[k] = eye[k] + t * d[k];
        for (int s = 0; s < 6; s++) {
            double q[3] = { x[0], x[1], x[2] };
            q[s / 2] += (s % 2 == 0) ? step : -step;
            T sin[6], sout[2];
            if (sx >= 0) { sin[2 * sx] = lo_of(q[0]); sin[2 * sx + 1] = hi_of(q[0]); }
            if (sy >= 0) { sin[2 * sy] = lo_of(q[1]); sin[2 * sy + 1] = hi_of(q[1]); }
            if (sz >= 0) { sin[2 * sz] = lo_of(q[2]); sin[2 * sz + 1] = hi_of(q[2]); }
            ivjit_surface(sin, sout);
            val[s] = 0.5 * (double)sout[0] + 0.5 * (double)sout[1];
        }
        double g[3] = { val[0] - val[1], val[2] - val[3], val[4] - val[5] };
        double len = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        double dl = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        double view[3] = { -d[0] / dl, -d[1] / dl, -d[2] / dl };
        double nrm[3] = { view[0], view[1], view[2] };
        if (isfinite(len) && len > 0.0) {
            for (int k = 0; k < 3; k++) nrm[k] = g[k] / len;
            if (nrm[0] * view[0] + nrm[1] * view[1] + nrm[2] * view[2] < 0.0)
                for (int k = 0; k < 3; k++) nrm[k] = -nrm[k];
        }
        double kl = sqrt(0.16 + 0.64 + 0.2025);
        double key[3] = { -0.4 / kl, 0.8 / kl, 0.45 / kl };
        double diffuse = 0.55 * fmax(nrm[0] * key[0] + nrm[1] * key[1] + nrm[2] * key[2], 0.0)
            + 0.35 * fmax(nrm[0] * view[0] + nrm[1] * view[1] + nrm[2] * view[2], 0.0);
        double cc = fmin(0.12 + diffuse, 1.0);
        double base[3] = { 1.0, 0.72, 0.38 };
        for (int k = 0; k < 3; k++) px[k] = (unsigned char)fmin(fmax(round(255.0 * cc * base[k]), 0.0), 255.0);
    }
    for (int dd = 16; dd > 0; dd /= 2) evaluated += __shfl_down_sync(0xffffffffu, evaluated, dd);
    if ((threadIdx.x & 31) == 0) atomicAdd(boxes, evaluated);
}
