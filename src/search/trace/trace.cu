// ivjit ray-tracing shading kernel: src/search/trace/trace.cu.
// Compiled after src/search/ray/ray.cu (whose ivjit_search_rays searches the camera's rays:
// camera_ray, the camera's numbers) and its prelude.
extern "C" __device__ void ivjit_surface(const T* in, T* out);

// The image of a searched frame (search::trace::shade): per pixel, the hit's colour from the
// surface's values at its middle point +- step along each axis, or the background (also where
// the search gave up: the host redoes those pixels).
extern "C" __global__ void ivjit_shade(
    u32 w, u32 h, const double* cam, int sx, int sy, int sz,
    const double* hits, const u32* status, unsigned char* rgb)
{
    const double* eye = cam;
    double step = cam[17];
    u32 n = w * h;
    for (u32 p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
        u32 row = p / w;
        unsigned char* px = rgb + 3 * (size_t)p;
        if (status[p] != 1) {
            // Background (search::trace::background).
            double g = 20.0 + 30.0 * (double)row / (double)h;
            px[0] = (unsigned char)g; px[1] = (unsigned char)g; px[2] = (unsigned char)(g + 12.0);
            continue;
        }
        double u, v, d[3];
        camera_ray(cam, p, w, h, &u, &v, d);
        double t = 0.5 * hits[2 * (size_t)p] + 0.5 * hits[2 * (size_t)p + 1];
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
}
