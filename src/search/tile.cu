// The bounds of a tile's pixels, shared by the search kernels that make tile boxes
// (src/search/tile.cu, part of every search kernel's prelude): columns j0..j1 and rows
// i0..i1 of a W x H image over the region, in double, with the rounding of the CPU's
// Axes::tile_box (the intrinsics are correctly rounded: the same bits). b = {x lo, x hi,
// y lo, y hi}.
static __device__ __forceinline__ void tile_bounds(
    u32 i0, u32 i1, u32 j0, u32 j1, double x0, double y1, double wx_lo, double wx_hi,
    double wy_lo, double wy_hi, double w, double h, double* b)
{
    b[0] = __dadd_rd(x0, __ddiv_rd(__dmul_rd((double)j0, wx_lo), w));
    b[1] = __dadd_ru(x0, __ddiv_ru(__dmul_ru((double)j1, wx_hi), w));
    b[2] = __dadd_rd(y1, -__ddiv_ru(__dmul_ru((double)i1, wy_hi), h));
    b[3] = __dadd_ru(y1, -__ddiv_rd(__dmul_rd((double)i0, wy_lo), h));
}
