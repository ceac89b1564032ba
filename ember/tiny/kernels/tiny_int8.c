/* ember.tiny int8 kernels (see tiny_int8.h for the math). Plain loops: a Cortex-M4 has no
   cache, so loop order matters less than keeping the inner loop free of branches. */
#include "tiny_int8.h"

static inline int32_t tiny_rne(float v) {
    if (v > 1073741824.0f) v = 1073741824.0f;
    if (v < -1073741824.0f) v = -1073741824.0f;
    int32_t t = (int32_t)v;            /* toward zero */
    float f = v - (float)t;            /* exact: |f| < 1 */
    if (f > 0.5f || (f == 0.5f && (t & 1))) t++;
    else if (f < -0.5f || (f == -0.5f && (t & 1))) t--;
    return t;
}

static inline int32_t tiny_clamp32(int32_t v, int32_t lo, int32_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

int32_t tiny_round_half_even(float v) { return tiny_rne(v); }

/* inlined into the kernels' loops; tiny_requant1 is its exported form */
static inline int8_t tiny_rq(const tiny_requant *q, int32_t oc, int32_t acc) {
    if (q->qmult) {
        int64_t v = (int64_t)(acc + (q->qbias ? q->qbias[oc] : 0)) * q->qmult[oc];
        int32_t t = 31 + q->qshift[oc];
        int32_t r = (int32_t)((v + ((int64_t)1 << (t - 1))) >> t) + q->zo;
        return (int8_t)tiny_clamp32(r, q->qmin, q->qmax);
    }
    float v = __builtin_fmaf((float)acc, q->mult[oc], q->bias ? q->bias[oc] : 0.0f);
    int32_t r = tiny_rne(v * q->inv_so) + q->zo;
    return (int8_t)tiny_clamp32(r, q->qmin, q->qmax);
}

int8_t tiny_requant1(const tiny_requant *q, int32_t oc, int32_t acc) {
    return tiny_rq(q, oc, acc);
}

int32_t tiny_conv_out_size(int32_t size, int32_t k, int32_t s, int32_t p, int32_t d) {
    return (size + 2 * p - d * (k - 1) - 1) / s + 1;
}

/* 1x1, stride 1, no padding, groups 1: a (oc, c) x (c, hw) product per image. */
static void tiny_conv1x1_s8(const int8_t *x, int32_t c, int32_t hw, int32_t x_zp,
                            const int8_t *wt, int32_t oc, const tiny_requant *q, int8_t *out) {
    for (int32_t o = 0; o < oc; o++) {
        const int8_t *wo = wt + o * c;
        int32_t wsum = 0;
        for (int32_t i = 0; i < c; i++) wsum += wo[i];
        for (int32_t p = 0; p < hw; p++) {
            int32_t acc = 0;
            for (int32_t i = 0; i < c; i++) acc += (int32_t)x[i * hw + p] * wo[i];
            out[o * hw + p] = tiny_rq(q, o, acc - x_zp * wsum);
        }
    }
}

/* The first kernel tap (of stride d) whose input index i0 + tap * d is >= 0. */
static inline int32_t tiny_first_tap(int32_t i0, int32_t d) {
    if (i0 >= 0) return 0;
    return d == 1 ? -i0 : (-i0 + d - 1) / d;
}

/* One past the last tap (of k) whose input index i0 + tap * d is < size. */
static inline int32_t tiny_end_tap(int32_t i0, int32_t size, int32_t k, int32_t d) {
    int32_t e = d == 1 ? size - i0 : (size - i0 + d - 1) / d;
    return e < k ? e : k;
}

void tiny_conv2d_s8(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w,
                    int32_t x_zp, const int8_t *wt, int32_t oc, int32_t kh, int32_t kw,
                    int32_t sh, int32_t sw, int32_t ph, int32_t pw, int32_t dh, int32_t dw,
                    int32_t groups, const tiny_requant *q, int8_t *out) {
    int32_t oh = tiny_conv_out_size(h, kh, sh, ph, dh);
    int32_t ow = tiny_conv_out_size(w, kw, sw, pw, dw);
    int32_t cg = c / groups, ocg = oc / groups;
    int32_t k3 = kh == 3 && kw == 3 && dh == 1 && dw == 1;
    for (int32_t b = 0; b < n; b++) {
        const int8_t *xb = x + b * c * h * w;
        int8_t *ob = out + b * oc * oh * ow;
        if (kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 && groups == 1) {
            tiny_conv1x1_s8(xb, c, h * w, x_zp, wt, oc, q, ob);
            continue;
        }
        for (int32_t o = 0; o < oc; o++) {
            const int8_t *xg = xb + (o / ocg) * cg * h * w;
            const int8_t *wo = wt + o * cg * kh * kw;
            int32_t wsum = 0;                  /* interior windows: sum(x*w) - x_zp*wsum */
            for (int32_t i = 0; i < cg * kh * kw; i++) wsum += wo[i];
            for (int32_t y = 0; y < oh; y++) {
                int32_t iy0 = y * sh - ph;
                int32_t ky0 = tiny_first_tap(iy0, dh), ky1 = tiny_end_tap(iy0, h, kh, dh);
                for (int32_t xo = 0; xo < ow; xo++) {
                    int32_t ix0 = xo * sw - pw;
                    int32_t kx0 = tiny_first_tap(ix0, dw), kx1 = tiny_end_tap(ix0, w, kw, dw);
                    const int8_t *xw = xg + iy0 * w + ix0;
                    int32_t acc = 0;
                    if (ky0 == 0 && ky1 == kh && kx0 == 0 && kx1 == kw) {
                        if (k3) {
                            for (int32_t i = 0; i < cg; i++) {
                                const int8_t *r0 = xw + i * h * w, *r1 = r0 + w, *r2 = r1 + w;
                                const int8_t *wi = wo + i * 9;
                                acc += r0[0] * wi[0] + r0[1] * wi[1] + r0[2] * wi[2]
                                     + r1[0] * wi[3] + r1[1] * wi[4] + r1[2] * wi[5]
                                     + r2[0] * wi[6] + r2[1] * wi[7] + r2[2] * wi[8];
                            }
                        } else {
                            for (int32_t i = 0; i < cg; i++)
                                for (int32_t ky = 0; ky < kh; ky++) {
                                    const int8_t *xr = xw + i * h * w + ky * dh * w;
                                    const int8_t *wr = wo + (i * kh + ky) * kw;
                                    for (int32_t kx = 0; kx < kw; kx++)
                                        acc += xr[kx * dw] * wr[kx];
                                }
                        }
                        acc -= x_zp * wsum;
                    } else {                   /* border: padding is the zero point: adds 0 */
                        for (int32_t i = 0; i < cg; i++)
                            for (int32_t ky = ky0; ky < ky1; ky++) {
                                const int8_t *xr = xw + i * h * w + ky * dh * w;
                                const int8_t *wr = wo + (i * kh + ky) * kw;
                                for (int32_t kx = kx0; kx < kx1; kx++)
                                    acc += ((int32_t)xr[kx * dw] - x_zp) * wr[kx];
                            }
                    }
                    ob[(o * oh + y) * ow + xo] = tiny_rq(q, o, acc);
                }
            }
        }
    }
}

void tiny_linear_s8(const int8_t *x, int32_t m, int32_t k, int32_t x_zp, const int8_t *wt,
                    int32_t n, const tiny_requant *q, int8_t *out) {
    for (int32_t j = 0; j < n; j++) {
        const int8_t *wj = wt + j * k;
        int32_t wsum = 0;
        for (int32_t i = 0; i < k; i++) wsum += wj[i];
        for (int32_t r = 0; r < m; r++) {
            const int8_t *xr = x + r * k;
            int32_t acc = 0;
            for (int32_t i = 0; i < k; i++) acc += (int32_t)xr[i] * wj[i];
            out[r * n + j] = tiny_rq(q, j, acc - x_zp * wsum);
        }
    }
}

void tiny_add_s8(const int8_t *a, int32_t a_zp, float a_scale, const int8_t *b, int32_t b_zp,
                 float b_scale, int32_t len, float inv_so, int32_t zo, int32_t qmin,
                 int32_t qmax, int8_t *out) {
    for (int32_t i = 0; i < len; i++) {
        float da = (float)((int32_t)a[i] - a_zp) * a_scale;
        float db = (float)((int32_t)b[i] - b_zp) * b_scale;
        int32_t r = tiny_rne((da + db) * inv_so) + zo;
        out[i] = (int8_t)tiny_clamp32(r, qmin, qmax);
    }
}

void tiny_avgpool2d_s8(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w,
                       int32_t x_zp, int32_t kh, int32_t kw, int32_t sh, int32_t sw,
                       float mult, int32_t zo, int8_t *out) {
    int32_t oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1;
    for (int32_t pl = 0; pl < n * c; pl++) {
        const int8_t *xp = x + pl * h * w;
        for (int32_t y = 0; y < oh; y++) {
            for (int32_t xo = 0; xo < ow; xo++) {
                int32_t acc = 0;
                for (int32_t ky = 0; ky < kh; ky++)
                    for (int32_t kx = 0; kx < kw; kx++)
                        acc += xp[(y * sh + ky) * w + xo * sw + kx];
                acc -= x_zp * kh * kw;
                int32_t r = tiny_rne((float)acc * mult) + zo;
                out[(pl * oh + y) * ow + xo] = (int8_t)tiny_clamp32(r, -128, 127);
            }
        }
    }
}

void tiny_clamp_s8(const int8_t *x, int32_t len, int32_t lo, int32_t hi, int8_t *out) {
    for (int32_t i = 0; i < len; i++) out[i] = (int8_t)tiny_clamp32(x[i], lo, hi);
}

void tiny_grad_weight_s8(const int8_t *dy, const int8_t *x, int32_t x_zp, int32_t b,
                         int32_t n, int32_t k, int32_t p, int32_t *dw) {
    for (int32_t j = 0; j < n; j++) {
        for (int32_t i = 0; i < k; i++) {
            int32_t acc = 0;
            for (int32_t s = 0; s < b; s++) {
                const int8_t *dys = dy + (s * n + j) * p;
                const int8_t *xs = x + (s * k + i) * p;
                for (int32_t t = 0; t < p; t++) acc += (int32_t)dys[t] * ((int32_t)xs[t] - x_zp);
            }
            dw[j * k + i] = acc;
        }
    }
}

void tiny_grad_bias_s8(const int8_t *dy, int32_t b, int32_t n, int32_t p, int32_t *db) {
    for (int32_t j = 0; j < n; j++) {
        int32_t acc = 0;
        for (int32_t s = 0; s < b; s++)
            for (int32_t t = 0; t < p; t++) acc += dy[(s * n + j) * p + t];
        db[j] = acc;
    }
}

void tiny_grad_input_s8(const int8_t *dy, const int8_t *wt, int32_t b, int32_t n, int32_t k,
                        int32_t p, int32_t *dx) {
    for (int32_t s = 0; s < b; s++) {
        for (int32_t i = 0; i < k; i++) {
            for (int32_t t = 0; t < p; t++) {
                int32_t acc = 0;
                for (int32_t j = 0; j < n; j++)
                    acc += (int32_t)dy[(s * n + j) * p + t] * wt[j * k + i];
                dx[(s * k + i) * p + t] = acc;
            }
        }
    }
}
