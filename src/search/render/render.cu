// ivjit search kernels: src/search/render/render.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64, lo_of, hi_of)
// and the #defines of render.rs (UNSET).

// Boxes of the live tiles (row, col pairs) of one level, written as the expression kernel's
// inputs: variable k's lower bounds at in[2k*n + t], upper bounds at in[(2k+1)*n + t].
extern "C" __global__ void ivjit_search_boxes(
    u32 n, const u32* tiles, T* in,
    GRID_PARAMS, u32 tile, u32 width, u32 height, int kx, int ky)
{
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        u32 i0 = tiles[2 * t] * tile, j0 = tiles[2 * t + 1] * tile;
        u32 i1 = min(i0 + tile, height), j1 = min(j0 + tile, width);
        double b[4];
        tile_bounds(i0, i1, j0, j1, width, height, GRID_ARGS, b);
        if (kx >= 0) {
            in[(size_t)(2 * kx) * n + t] = lo_of(b[0]);
            in[(size_t)(2 * kx + 1) * n + t] = hi_of(b[1]);
        }
        if (ky >= 0) {
            in[(size_t)(2 * ky) * n + t] = lo_of(b[2]);
            in[(size_t)(2 * ky + 1) * n + t] = hi_of(b[3]);
        }
    }
}

// Class of each live tile from the expression's output [lo, hi] (0 outside: lo > 0, 1 inside:
// hi < 0, 2 neither, NaN included) into cls[row * cols + col]; counts[1 + class] += 1; the
// k x k children of a boundary tile (clipped to next_rows x next_cols) appended to next at
// counts[0] (k = 0 in the last round).
extern "C" __global__ void ivjit_search_classify(
    u32 n, const u32* tiles, const T* out, unsigned char* cls, u32 cols,
    u32 k, u32 next_rows, u32 next_cols, u32* next, u32* counts)
{
    u32 lane = threadIdx.x & 31;
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        T lo = out[t], hi = out[(size_t)n + t];
        unsigned char c = lo > (T)0 ? 0 : (hi < (T)0 ? 1 : 2);
        u32 r = tiles[2 * t], q = tiles[2 * t + 1];
        cls[(size_t)r * cols + q] = c;
        // One atomic per warp and class.
        u32 active = __activemask();
        u32 leader = __ffs(active) - 1;
        for (u32 v = 0; v < 3; v++) {
            u32 votes = __ballot_sync(active, c == v);
            if (lane == leader && votes) atomicAdd(&counts[1 + v], __popc(votes));
        }
        if (c == 2 && k > 0) {
            u32 rows = min(k, next_rows - r * k), cs = min(k, next_cols - q * k);
            u32 base = atomicAdd(&counts[0], rows * cs);
            for (u32 a = 0; a < rows; a++)
                for (u32 b = 0; b < cs; b++) {
                    u32 s = base + a * cs + b;
                    next[2 * s] = r * k + a;
                    next[2 * s + 1] = q * k + b;
                }
        }
    }
}

// Each pixel's class: that of the coarsest decided tile over it, else 2. levels holds
// (tile, cols, offset into cls) per level. A thread composes eight pixels of a row (one
// 8-byte store where the row width allows), so that a level's row index is found once and a
// tile over several of them is read once from the cache. Only the rows of a part are
// composed: those whose band (rows / band) % count == index (all of them: band = height,
// index 0, count 1).
__device__ __forceinline__ u32 tile_of(u32 x, u32 tile)
{
    // The tile sizes are powers of two in every default plan: a shift, else a division.
    u32 shift = 31 - __clz(tile);
    return (tile == (1u << shift)) ? (x >> shift) : (x / tile);
}

extern "C" __global__ void ivjit_search_compose(
    unsigned char* image, u32 width, u32 height, const unsigned char* cls,
    const u32* levels, u32 n_levels, u32 band, u32 index, u32 count)
{
    u32 groups = (width + 7) / 8;
    u32 bands = (height + band - 1) / band;
    u32 owned = bands > index ? (bands - index + count - 1) / count : 0;
    size_t total = (size_t)owned * band * groups;
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < total;
         q += (size_t)gridDim.x * blockDim.x) {
        u32 k = q / groups, j0 = (q % groups) * 8;
        u32 i = (index + (k / band) * count) * band + k % band;
        if (i >= height) continue;
        u32 m = min(8u, width - j0);
        unsigned char c[8];
        u32 pending = (1u << m) - 1;
        for (u32 t = 0; t < 8; t++) c[t] = 2;
        for (u32 l = 0; l < n_levels && pending; l++) {
            u32 tile = levels[3 * l], cols = levels[3 * l + 1], off = levels[3 * l + 2];
            const unsigned char* row = cls + (size_t)off + (size_t)tile_of(i, tile) * cols;
            for (u32 t = 0; t < m; t++) {
                if (!(pending >> t & 1)) continue;
                unsigned char v = row[tile_of(j0 + t, tile)];
                if (v != 2) {
                    if (v != UNSET) c[t] = v;
                    pending &= ~(1u << t);
                }
            }
        }
        unsigned char* out = image + (size_t)i * width + j0;
        if (m == 8 && width % 8 == 0) {
            unsigned long long w = 0;
            for (u32 t = 0; t < 8; t++) w |= (unsigned long long)c[t] << (8 * t);
            *(unsigned long long*)out = w;
        } else {
            for (u32 t = 0; t < m; t++) out[t] = c[t];
        }
    }
}
