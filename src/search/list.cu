// ivjit work lists as a batch: src/search/list.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, lo_of, hi_of) by the rules that
// keep their work list as boxes of doubles (exclude, pave).

// Box i of the list (side k at list[2(i nv + k)], [.. + 1]) as the expression's input i.
extern "C" __global__ void ivjit_list_inputs(u32 n, u32 nv, const double* list, T* in)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        for (u32 k = 0; k < nv; k++) {
            in[2 * k * (size_t)n + i] = lo_of(list[2 * ((size_t)i * nv + k)]);
            in[(2 * k + 1) * (size_t)n + i] = hi_of(list[2 * ((size_t)i * nv + k) + 1]);
        }
}
