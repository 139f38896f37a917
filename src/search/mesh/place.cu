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
