// ivjit branch-and-bound kernels: src/search/minimize/minimize.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of).

__device__ __forceinline__ u64 key(double x) {
    u64 b = (u64)__double_as_longlong(x);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}
__device__ __forceinline__ double unkey(u64 k) {
    return __longlong_as_double((long long)((k >> 63) ? (k & 0x7fffffffffffffffull) : ~k));
}
// search::minimize::mid
__device__ __forceinline__ double mid(double a, double b) {
    double c = __dadd_rn(__dmul_rn(0.5, a), __dmul_rn(0.5, b));
    if (c < a) c = a;
    if (c > b) c = b;
    return c;
}

// The batch of 2n boxes: box i of the list (side k at list[2(i nv + k)], [.. + 1]) at i, its
// midpoint at n + i, in the expression kernel's layout (stride 2n).
extern "C" __global__ void ivjit_mz_inputs(u32 n, u32 nv, const double* list, T* in)
{
    size_t m = 2 * (size_t)n;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        for (u32 k = 0; k < nv; k++) {
            double a = list[2 * ((size_t)i * nv + k)], b = list[2 * ((size_t)i * nv + k) + 1];
            double c = mid(a, b);
            in[2 * k * m + i] = lo_of(a);
            in[(2 * k + 1) * m + i] = hi_of(b);
            in[2 * k * m + n + i] = lo_of(c);
            in[(2 * k + 1) * m + n + i] = hi_of(c);
        }
}

// st[0] = key of the least upper bound of a midpoint enclosure so far (NaN never counts).
extern "C" __global__ void ivjit_mz_upper(u32 n, const T* out, u64* st)
{
    size_t m = 2 * (size_t)n;
    u64 best = ~0ull;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double h = (double)out[m + n + i];
        if (h == h) best = min(best, key(h));
    }
    for (int d = 16; d > 0; d /= 2) best = min(best, __shfl_down_sync(0xffffffffu, best, d));
    if ((threadIdx.x & 31) == 0 && best != ~0ull) atomicMin(&st[0], best);
}

// Keeps box i when its lower bound is <= the upper bound (st[1]: the inverted key of the least
// kept lower bound, so that zeroed memory starts it at +inf; st[2]: kept), and writes its
// halves along its (last) widest side to next (st[3]: boxes written; st[4] = 1 when they
// would pass cap boxes). st here is this round's slot: zeroed, never reused.
extern "C" __global__ void ivjit_mz_split(
    u32 n, u32 nv, const double* list, const T* out, const u64* upper_key, u64* st,
    double* next, u32 cap)
{
    double upper = unkey(*upper_key);
    if (blockIdx.x == 0 && threadIdx.x == 0) st[0] = *upper_key;
    u32 lane = threadIdx.x & 31;
    u64 kept = 0, least = 0; // this thread's count and greatest inverted key
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double l = (double)out[i];
        bool keep = l <= upper;
        // One atomic per warp for the slots of its kept boxes (two halves each).
        u32 active = __activemask();
        u32 votes = __ballot_sync(active, keep);
        u32 leader = __ffs(active) - 1;
        u64 base = 0;
        if (lane == leader && votes) base = atomicAdd(&st[3], 2ull * __popc(votes));
        base = __shfl_sync(active, base, leader);
        if (!keep) continue;
        kept++;
        least = max(least, ~key(l));
        u64 at = base + 2ull * __popc(votes & ((1u << lane) - 1));
        if (at + 2 > cap) { st[4] = 1; continue; }
        const double* b = list + 2 * (size_t)i * nv;
        u32 w = 0;
        for (u32 k = 1; k < nv; k++)
            if (__dadd_rn(b[2 * k + 1], -b[2 * k]) >= __dadd_rn(b[2 * w + 1], -b[2 * w])) w = k;
        double c = mid(b[2 * w], b[2 * w + 1]);
        double* left = next + 2 * (size_t)at * nv;
        double* right = left + 2 * nv;
        for (u32 k = 0; k < 2 * nv; k++) { left[k] = b[k]; right[k] = b[k]; }
        left[2 * w + 1] = c;
        right[2 * w] = c;
    }
    // One atomic per warp for the count and the least lower bound.
    for (int d = 16; d > 0; d /= 2) {
        kept += __shfl_down_sync(0xffffffffu, kept, d);
        least = max(least, __shfl_down_sync(0xffffffffu, least, d));
    }
    if (lane == 0 && kept) {
        atomicAdd(&st[2], kept);
        atomicMax(&st[1], least);
    }
}

// st[5] = ~(the least index whose midpoint enclosure's upper bound is *upper_key), inverted
// so that the zeroed slot means none.
extern "C" __global__ void ivjit_mz_argmin(u32 n, const T* out, const u64* upper_key, u64* st)
{
    size_t m = 2 * (size_t)n;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double h = (double)out[m + n + i];
        if (h == h && key(h) == *upper_key) atomicMax(&st[5], ~(u64)i);
    }
}
