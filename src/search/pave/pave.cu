// ivjit paving kernel: src/search/pave/pave.cu.
// Compiled after the prelude of src/search/kernels.rs (T, u32, u64) and list.cu; IVJIT_F32 is
// defined in f32. The host (pave/gpu.rs) runs the round's programs before it: the contractor
// on the list's boxes (cout), the decorated functions on the contracted boxes (fout) and the
// complement's contractors on them (comp); this kernel is the CPU's Paver::round_on_cpu after
// those evaluations, box for box.

// The most variables a box of the device's rounds has (more run on the CPU's rounds).
#define PV_MAXV 16

// Room for `count` boxes after *counter, for each lane of the warp (one atomic per warp):
// the first index of this lane's. Every lane of the warp calls it.
__device__ u64 pv_reserve(u64* counter, u32 count)
{
    u32 lane = threadIdx.x & 31;
    u32 incl = count;
    for (u32 d = 1; d < 32; d <<= 1) {
        u32 y = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += y;
    }
    u32 total = __shfl_sync(0xffffffffu, incl, 31);
    u64 base = 0;
    if (lane == 31 && total) base = atomicAdd(counter, (u64)total);
    base = __shfl_sync(0xffffffffu, base, 31);
    return base + incl - count;
}

// The parts of box b outside its sub-box c as disjoint slabs (slabs() in pave/mod.rs): per
// variable k, the part of the remaining slab below c in k, then the one above. Writes them
// at out (2 nv values each) unless out is null; returns how many there are.
__device__ u32 pv_slabs(const double* b, const double* c, u32 nv, double* out)
{
    u32 count = 0;
    for (u32 k = 0; k < nv; k++)
        for (u32 side = 0; side < 2; side++) {
            bool cut = side == 0 ? c[2 * k] > b[2 * k] : c[2 * k + 1] < b[2 * k + 1];
            if (!cut) continue;
            if (out) {
                double* s = out + 2 * (size_t)count * nv;
                for (u32 d = 0; d < nv; d++) {
                    const double* from = d < k ? c : b;
                    s[2 * d] = from[2 * d];
                    s[2 * d + 1] = from[2 * d + 1];
                }
                if (side == 0) s[2 * k + 1] = c[2 * k];
                else s[2 * k] = c[2 * k + 1];
            }
            count++;
        }
    return count;
}

// Where to cut the side [lo, hi] (cut() in pave/mod.rs): at a lo + r hi when bounded.
__device__ double pv_cut(double lo, double hi, double a, double r, double maxf)
{
    double m;
    if (isfinite(lo) && isfinite(hi)) m = __dadd_rn(__dmul_rn(a, lo), __dmul_rn(r, hi));
    else if (lo < 0 && hi > 0) m = 0.0;
    else if (isfinite(lo)) m = fmin(fmax(__dmul_rn(2.0, lo), 1.0), maxf);
    else if (isfinite(hi)) m = fmax(fmin(__dmul_rn(2.0, hi), -1.0), -maxf);
    else m = 0.0;
#ifdef IVJIT_F32
    m = (double)__double2float_rn(m);
#endif
    return m;
}

// Whether the round narrowed box b to h by more than the ratio of some side (shrank() in
// pave/mod.rs): width(h_k) < keep * width(b_k), keep = 1 - ratio (0 < keep < 1), rounded
// to nearest as the CPU computes it; never when keep >= 1 (ratio 0).
__device__ bool pv_shrank(const double* b, const double* h, u32 nv, double keep)
{
    if (!(keep < 1.0)) return false;
    for (u32 k = 0; k < nv; k++)
        if (__dadd_rn(h[2 * k + 1], -h[2 * k]) <
            __dmul_rn(keep, __dadd_rn(b[2 * k + 1], -b[2 * k])))
            return true;
    return false;
}

__device__ void pv_copy(double* to, const double* from, u32 nv)
{
    for (u32 k = 0; k < 2 * nv; k++) to[k] = from[k];
}

// The round's boxes (n of nv variables; no constraints with ranges rg, their values in fout:
// the bounds of function j in arrays 2j and 2j + 1, its decoration code in array codes + j;
// nc complement contractors) sorted into the lists: outer (the contractor's slabs, a box it empties),
// inner (a contracted box inside every range where every function is defined, the slabs
// the complement's contractors cut off), boundary (at eps or not cuttable) and next (the
// two parts of the rest, cut across its last widest side at a lo + r hi; or the rest uncut
// where the round narrowed the box by more than the ratio, keep = 1 - ratio). Each list is
// written after its base (the boxes earlier rounds wrote); st[0..4] count this round's
// next, inner, outer and boundary boxes, st[4] is set if a list had no room.
extern "C" __global__ void ivjit_pv_sort(
    u32 n, u32 nv, u32 no, u32 nc, u32 codes, const double* list, const T* cout, const T* fout,
    const T* comp, const double* rg, double defined, double eps, double a, double r,
    double maxf, double keep, u64* st, double* next, u64 next_cap, double* inner, u64 inner_base,
    u64 inner_cap, double* outer, u64 outer_base, u64 outer_cap, double* bnd, u64 bnd_base,
    u64 bnd_cap)
{
    // Whole warps walk the boxes together (pv_reserve takes every lane).
    for (size_t base = (size_t)blockIdx.x * blockDim.x; base < n;
         base += (size_t)gridDim.x * blockDim.x) {
        size_t i = base + threadIdx.x;
        double b[2 * PV_MAXV], c[2 * PV_MAXV], h[2 * PV_MAXV];
        u32 n_outer = 0, n_inner = 0, n_bnd = 0, n_next = 0;
        // Which box goes where: whole b outer, whole c inner, slabs of c by h inner.
        bool empty = false, c_inner = false, h_slabs = false;
        u32 w = 0;
        double mid = 0;
        bool again = false;
        if (i < n) {
            pv_copy(b, list + 2 * i * nv, nv);
            for (u32 k = 0; k < 2 * nv; k++) {
                c[k] = (double)cout[k * (size_t)n + i];
                if (isnan(c[k])) empty = true;
            }
            if (empty) {
                n_outer = 1;
            } else {
                n_outer = pv_slabs(b, c, nv, 0);
                bool is_def = true, inside = true;
                for (u32 j = 0; j < no; j++) {
                    if (!((double)fout[(codes + j) * (size_t)n + i] >= defined)) is_def = false;
                    double lo = (double)fout[2 * j * (size_t)n + i];
                    double hi = (double)fout[(2 * j + 1) * (size_t)n + i];
                    if (!(!isnan(lo) && lo >= rg[2 * j] && hi <= rg[2 * j + 1])) inside = false;
                }
                pv_copy(h, c, nv);
                if (is_def && inside) {
                    c_inner = true;
                    n_inner = 1;
                } else if (is_def && nc > 0) {
                    // The hull of the complement's contractors' results (NaN: none yet).
                    for (u32 k = 0; k < 2 * nv; k++) h[k] = __longlong_as_double(0x7ff8000000000000ll);
                    bool any = false;
                    for (u32 j = 0; j < nc; j++) {
                        const T* g = comp + 2 * (size_t)j * nv * n + i;
                        bool some = true;
                        for (u32 k = 0; k < 2 * nv; k++)
                            if (isnan((double)g[k * (size_t)n])) some = false;
                        if (!some) continue;
                        any = true;
                        for (u32 k = 0; k < nv; k++) {
                            double lo = (double)g[2 * k * (size_t)n];
                            double hi = (double)g[(2 * k + 1) * (size_t)n];
                            if (isnan(h[2 * k]) || lo < h[2 * k]) h[2 * k] = lo;
                            if (isnan(h[2 * k + 1]) || hi > h[2 * k + 1]) h[2 * k + 1] = hi;
                        }
                    }
                    if (!any) {
                        c_inner = true;
                        n_inner = 1;
                    } else {
                        h_slabs = true;
                        n_inner = pv_slabs(c, h, nv, 0);
                    }
                }
                if (!c_inner) {
                    for (u32 k = 0; k < nv; k++)
                        if (__dadd_rn(h[2 * k + 1], -h[2 * k]) >=
                            __dadd_rn(h[2 * w + 1], -h[2 * w]))
                            w = k;
                    double lo = h[2 * w], hi = h[2 * w + 1];
                    mid = pv_cut(lo, hi, a, r, maxf);
                    if (__dadd_rn(hi, -lo) <= eps || !(lo < mid && mid < hi)) n_bnd = 1;
                    else if (pv_shrank(b, h, nv, keep)) again = true, n_next = 1;
                    else n_next = 2;
                }
            }
        }
        u64 at_next = pv_reserve(&st[0], n_next);
        u64 at_inner = inner_base + pv_reserve(&st[1], n_inner);
        u64 at_outer = outer_base + pv_reserve(&st[2], n_outer);
        u64 at_bnd = bnd_base + pv_reserve(&st[3], n_bnd);
        if (i >= n) continue;
        if (at_next + n_next > next_cap || at_inner + n_inner > inner_cap ||
            at_outer + n_outer > outer_cap || at_bnd + n_bnd > bnd_cap) {
            st[4] = 1;
            continue;
        }
        if (empty) pv_copy(outer + 2 * at_outer * nv, b, nv);
        else pv_slabs(b, c, nv, outer + 2 * at_outer * nv);
        if (c_inner) pv_copy(inner + 2 * at_inner * nv, c, nv);
        else if (h_slabs) pv_slabs(c, h, nv, inner + 2 * at_inner * nv);
        if (n_bnd) pv_copy(bnd + 2 * at_bnd * nv, h, nv);
        if (again) {
            pv_copy(next + 2 * at_next * nv, h, nv);
        } else if (n_next) {
            double* left = next + 2 * at_next * nv;
            double* right = left + 2 * nv;
            pv_copy(left, h, nv);
            pv_copy(right, h, nv);
            left[2 * w + 1] = mid;
            right[2 * w] = mid;
        }
    }
}
