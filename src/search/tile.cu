// The bounds of a tile's pixels, shared by the search kernels that make tile boxes
// (src/search/tile.cu, part of every search kernel's prelude): columns j0..j1 and rows
// i0..i1 of a W x H image over the region, in double, with the rounding of the CPU's
// Axes::tile_box (the intrinsics are correctly rounded: the same bits). The constants a are
// Axes::constants: {x0/W, x1/W} rounded down, then up; {y1/H, y0/H} rounded down, then up.
// An edge is a0 (n - k) + a1 k, each step rounded in the bound's direction, clamped to the
// finite doubles (the real edge lies in the finite region; a rounded sum may overflow).
// b = {x lo, x hi, y lo, y hi}.
static __device__ __forceinline__ double edge_rd(double a0, double a1, u32 n, u32 k)
{
    double s = __dadd_rd(__dmul_rd(a0, (double)(n - k)), __dmul_rd(a1, (double)k));
    return fmax(s, -1.7976931348623157e308);
}
static __device__ __forceinline__ double edge_ru(double a0, double a1, u32 n, u32 k)
{
    double s = __dadd_ru(__dmul_ru(a0, (double)(n - k)), __dmul_ru(a1, (double)k));
    return fmin(s, 1.7976931348623157e308);
}
static __device__ __forceinline__ void tile_bounds(
    u32 i0, u32 i1, u32 j0, u32 j1, u32 w, u32 h, double ax0_lo, double ax1_lo,
    double ax0_hi, double ax1_hi, double ay1_lo, double ay0_lo, double ay1_hi,
    double ay0_hi, double* b)
{
    b[0] = edge_rd(ax0_lo, ax1_lo, w, j0);
    b[1] = edge_ru(ax0_hi, ax1_hi, w, j1);
    b[2] = edge_rd(ay1_lo, ay0_lo, h, i1);
    b[3] = edge_ru(ay1_hi, ay0_hi, h, i0);
}
// The grid's parameters of every tile-box kernel (Axes::constants, in order) and the same
// names as arguments.
#define GRID_PARAMS                                                                         \
    double ax0_lo, double ax1_lo, double ax0_hi, double ax1_hi, double ay1_lo,             \
        double ay0_lo, double ay1_hi, double ay0_hi
#define GRID_ARGS ax0_lo, ax1_lo, ax0_hi, ax1_hi, ay1_lo, ay0_lo, ay1_hi, ay0_hi
