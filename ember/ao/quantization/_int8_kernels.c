/* ember int8 kernels: u8 x s8 -> int32 GEMM (AVX-512 VNNI when the CPU has it), im2col into
   the GEMM's packed layout, direct depthwise convs, and per-channel requantization.

   out[oc, col] = requant(sum_k (a[k, col] - za) * w[oc, k])
   requant(acc) = clamp(rne((acc * sa * sw[oc] + bias[oc]) / so) + zo, qmin, qmax)
   (fp32 output: acc * sa * sw[oc] + bias[oc], clamped to [lo, hi] by a relu/hardtanh).

   Layout. The activations (u8) are packed in panels of NR = 64 columns:
   pk[((panel * KG + g) * 64 + j) * 4 + b] = a[4 g + b, panel * 64 + j], KG = Kp / 4.
   The weights stay row-major [OC][Kp]; four weight bytes are broadcast against 64 bytes of
   one panel row group, so one vpdpbusd does 16 columns x 4 k. sum_k (a - za) w is computed
   as sum_k a w - za * sum_k w: the weight row sums are computed once per call (a pass over
   the weights; nothing is cached, so a weight changed in place is always seen). s8
   activations become u8 by adding 128 (xor 0x80) with za + 128. Padding (k beyond K,
   columns beyond the count, conv borders) holds za, so it adds nothing after correction.

   Paths: register tiles of 6 x 64, 12 x 32 and 24 x 16 (by column count) and, for a linear
   layer on at most 8 rows, a row-dot kernel along K; depthwise convs vectorized along the
   plane, or channels-in-lanes for planes of 4x4 and less. Without VNNI the same layout runs
   a plain C tile (auto-vectorized), without AVX-512 the plane-wise integer depthwise loop.
   Limits: int32 sums, so K up to 2^31 / (255 * 128) = 65793 (44 thousand with the
   zero-point correction of an int8 input). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <omp.h>
#if defined(__AVX512VNNI__) || defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#define NR 64
#define MR 6
#define EM_DW_SMALL 16      /* input planes up to 4x4 take the channels-in-lanes kernel */

void em_q_set_threads(int n) { omp_set_num_threads(n); }

typedef struct {
    const float *mult;      /* per output channel: sa * sw[oc] */
    const float *bias;      /* per output channel, or NULL */
    float inv_so;           /* 1 / output scale */
    int32_t zo, qmin, qmax; /* output zero point and clamp range (relu: qmin >= zo) */
    int32_t kind;           /* 0: uint8, 1: int8, 2: float32 */
    float lo, hi;           /* float output only: the post op's clamp (relu: 0, inf) */
} em_requant;

static inline float em_real(const em_requant *q, int64_t oc, int32_t acc) {
    float v = (float)acc * q->mult[oc];
    if (q->bias) v += q->bias[oc];
    return v;
}

static inline void em_store1(const em_requant *q, int64_t oc, int32_t acc, void *out, int64_t i) {
    float v = em_real(q, oc, acc);
    if (q->kind == 2) {
        ((float *)out)[i] = v < q->lo ? q->lo : (v > q->hi ? q->hi : v);
        return;
    }
    int32_t r = (int32_t)nearbyintf(v * q->inv_so) + q->zo;
    r = r < q->qmin ? q->qmin : (r > q->qmax ? q->qmax : r);
    if (q->kind == 0) ((uint8_t *)out)[i] = (uint8_t)r;
    else ((int8_t *)out)[i] = (int8_t)r;
}

/* Row sums of the (padded) weight rows: sum_k w[oc, k]. */
static void em_q_wsum(const int8_t *w, int64_t oc, int64_t kp, int32_t *out) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < oc; r++) {
        int32_t s = 0;
        const int8_t *p = w + r * kp;
        for (int64_t k = 0; k < kp; k++) s += p[k];
        out[r] = s;
    }
}

/* Four rows of 64 bytes (k = 4g .. 4g + 3 of 64 columns) -> the panel's 4-byte groups. */
static inline void em_interleave4(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                                  const uint8_t *r3, uint8_t *dst) {
#ifdef __AVX512BW__
    __m512i a = _mm512_loadu_si512(r0), b = _mm512_loadu_si512(r1);
    __m512i c = _mm512_loadu_si512(r2), d = _mm512_loadu_si512(r3);
    __m512i ablo = _mm512_unpacklo_epi8(a, b), abhi = _mm512_unpackhi_epi8(a, b);
    __m512i cdlo = _mm512_unpacklo_epi8(c, d), cdhi = _mm512_unpackhi_epi8(c, d);
    __m512i q[4] = {_mm512_unpacklo_epi16(ablo, cdlo), _mm512_unpackhi_epi16(ablo, cdlo),
                    _mm512_unpacklo_epi16(abhi, cdhi), _mm512_unpackhi_epi16(abhi, cdhi)};
    /* 128-bit lane L of q[m] holds columns 16 L + 4 m .. + 3 */
    for (int m = 0; m < 4; m++) {
        _mm_storeu_si128((__m128i *)(dst + (0 + 4 * m) * 4), _mm512_extracti32x4_epi32(q[m], 0));
        _mm_storeu_si128((__m128i *)(dst + (16 + 4 * m) * 4), _mm512_extracti32x4_epi32(q[m], 1));
        _mm_storeu_si128((__m128i *)(dst + (32 + 4 * m) * 4), _mm512_extracti32x4_epi32(q[m], 2));
        _mm_storeu_si128((__m128i *)(dst + (48 + 4 * m) * 4), _mm512_extracti32x4_epi32(q[m], 3));
    }
#else
    for (int j = 0; j < NR; j++) {
        dst[4 * j] = r0[j];
        dst[4 * j + 1] = r1[j];
        dst[4 * j + 2] = r2[j];
        dst[4 * j + 3] = r3[j];
    }
#endif
}

/* The columns of panel p as runs of evenly spaced sources (at most maxlen columns each):
   run r covers columns rj[r] .. rj[r] + rlen[r] - 1, reading from offset rsrc[r] with
   stride sw. Returns the number of runs. */
static int64_t em_q_panel_runs(int64_t p, int64_t ncol, int64_t c_, int64_t hp, int64_t wp,
                               int64_t c0, int64_t sh, int64_t sw, int64_t oh_, int64_t ow_,
                               int64_t maxlen, int64_t *rj, int64_t *rlen, int64_t *rsrc) {
    int64_t nrun = 0;
    for (int64_t j = 0; j < ncol; j++) {
        int64_t col = p * NR + j, ow = col % ow_, t = col / ow_;
        int64_t src = ((t / oh_) * c_ + c0) * hp * wp + (t % oh_) * sh * wp + ow * sw;
        if (nrun && rj[nrun - 1] + rlen[nrun - 1] == j
                && rsrc[nrun - 1] + rlen[nrun - 1] * sw == src && rlen[nrun - 1] < maxlen) {
            rlen[nrun - 1]++;
        } else {
            rj[nrun] = j; rlen[nrun] = 1; rsrc[nrun] = src; nrun++;
        }
    }
    return nrun;
}

#ifdef __AVX512VBMI__
/* im2col straight into the panels, for column strides 1 to 4: for each group of 4 k and each
   run of up to 16 columns whose sources are evenly spaced, the 4 source rows are loaded (a
   strided run: one load and a byte permutation picking every sw-th byte) and interleaved
   into 16 four-byte groups (no intermediate rows). */
static void em_q_im2col_direct(const uint8_t *xp, int64_t n_, int64_t c_, int64_t hp,
                               int64_t wp, int64_t c0, int64_t cg, int64_t kh_, int64_t kw_,
                               int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t oh_,
                               int64_t ow_, int32_t fill, uint8_t *pk, int64_t kp) {
    const int64_t cols = n_ * oh_ * ow_, npanel = (cols + NR - 1) / NR, kg = kp / 4;
    const int64_t k = cg * kh_ * kw_;
    #pragma omp parallel
    {
        int64_t rj[NR], rlen[NR], rsrc[NR];
        #pragma omp for schedule(static)
        for (int64_t p = 0; p < npanel; p++) {
            int64_t ncol = cols - p * NR < NR ? cols - p * NR : NR;
            int64_t nrun = em_q_panel_runs(p, ncol, c_, hp, wp, c0, sh, sw, oh_, ow_, 16,
                                           rj, rlen, rsrc);
            uint8_t *dst = pk + p * kg * NR * 4;
            if (ncol < NR)       /* columns past the end (k past K: the loads' fill below) */
                for (int64_t g = 0; g < kg; g++)
                    memset(dst + (g * NR + ncol) * 4, fill, (size_t)((NR - ncol) * 4));
            uint8_t sel[64];
            for (int i = 0; i < 64; i++) sel[i] = (uint8_t)(i < 16 ? i * sw : 0);
            const __m512i pick = _mm512_loadu_si512(sel);
            for (int64_t g = 0; g < kg; g++) {
                int64_t off[4];
                for (int b = 0; b < 4; b++) {
                    int64_t kk = 4 * g + b, c = kk / (kh_ * kw_), r = kk % (kh_ * kw_);
                    off[b] = kk >= k ? -1 : c * hp * wp + (r / kw_) * dh * wp + (r % kw_) * dw;
                }
                uint8_t *dg = dst + g * NR * 4;
                const __m128i fv = _mm_set1_epi8((char)fill);
                for (int64_t r = 0; r < nrun; r++) {
                    __mmask16 mk = (__mmask16)((1u << rlen[r]) - 1u);
                    int64_t span = (rlen[r] - 1) * sw + 1;
                    __mmask64 lm = span >= 64 ? ~0ULL : (1ULL << span) - 1;
                    __m128i v[4];
                    for (int b = 0; b < 4; b++) {
                        if (off[b] < 0) {
                            v[b] = fv;
                        } else if (sw == 1) {
                            v[b] = _mm_mask_loadu_epi8(fv, mk, xp + rsrc[r] + off[b]);
                        } else {
                            __m512i z = _mm512_maskz_loadu_epi8(lm, xp + rsrc[r] + off[b]);
                            v[b] = _mm_mask_mov_epi8(fv, mk, _mm512_castsi512_si128(
                                _mm512_permutexvar_epi8(pick, z)));
                        }
                    }
                    __m128i ablo = _mm_unpacklo_epi8(v[0], v[1]), abhi = _mm_unpackhi_epi8(v[0], v[1]);
                    __m128i cdlo = _mm_unpacklo_epi8(v[2], v[3]), cdhi = _mm_unpackhi_epi8(v[2], v[3]);
                    __m128i q[4] = {_mm_unpacklo_epi16(ablo, cdlo), _mm_unpackhi_epi16(ablo, cdlo),
                                    _mm_unpacklo_epi16(abhi, cdhi), _mm_unpackhi_epi16(abhi, cdhi)};
                    uint8_t *d = dg + rj[r] * 4;
                    for (int m = 0; m < 4 && 4 * m < rlen[r]; m++) {
                        int64_t left = rlen[r] - 4 * m;
                        __mmask8 cm = (__mmask8)(left >= 4 ? 0xF : (1u << left) - 1u);
                        _mm_mask_storeu_epi32(d + 16 * m, cm, q[m]);
                    }
                }
            }
        }
    }
}
#endif

/* im2col of xp (N, C, Hp, Wp), already padded with the fill value, into packed panels:
   k = (c * KH + kh) * KW + kw (channels c0 .. c0 + cg - 1), column = (n * OH + oh) * OW + ow.
   Per panel, rows of 64 columns are gathered as runs of consecutive sources (memcpy when
   the stride is 1), then interleaved into 4-byte groups. */
static void em_q_im2col(const uint8_t *xp, int64_t n_, int64_t c_, int64_t hp, int64_t wp,
                 int64_t c0, int64_t cg, int64_t kh_, int64_t kw_, int64_t sh, int64_t sw,
                 int64_t dh, int64_t dw, int64_t oh_, int64_t ow_, int32_t fill, uint8_t *pk,
                 int64_t kp) {
#ifdef __AVX512VBMI__
    if (sw <= 4) {
        em_q_im2col_direct(xp, n_, c_, hp, wp, c0, cg, kh_, kw_, sh, sw, dh, dw, oh_, ow_, fill,
                           pk, kp);
        return;
    }
#endif
    const int64_t cols = n_ * oh_ * ow_, npanel = (cols + NR - 1) / NR, kg = kp / 4;
    const int64_t k = cg * kh_ * kw_;
    #pragma omp parallel
    {
        uint8_t *rows = (uint8_t *)malloc((size_t)kp * NR);
        int64_t rj[NR], rlen[NR], rsrc[NR];
        #pragma omp for schedule(static)
        for (int64_t p = 0; p < npanel; p++) {
            int64_t ncol = cols - p * NR < NR ? cols - p * NR : NR;
            int64_t nrun = em_q_panel_runs(p, ncol, c_, hp, wp, c0, sh, sw, oh_, ow_, NR,
                                           rj, rlen, rsrc);
            int64_t kk = 0;
            for (int64_t c = 0; c < cg; c++)
                for (int64_t a = 0; a < kh_; a++)
                    for (int64_t b = 0; b < kw_; b++, kk++) {
                        uint8_t *row = rows + kk * NR;
                        const uint8_t *base = xp + c * hp * wp + a * dh * wp + b * dw;
                        for (int64_t r = 0; r < nrun; r++) {
                            const uint8_t *s = base + rsrc[r];
#ifdef __AVX512BW__
                            if (sw == 1 && rlen[r] <= 64) {
                                __mmask64 mk = rlen[r] == 64 ? ~0ULL : (1ULL << rlen[r]) - 1;
                                _mm512_mask_storeu_epi8(row + rj[r], mk,
                                                        _mm512_maskz_loadu_epi8(mk, s));
                            } else
#endif
                            if (sw == 1) memcpy(row + rj[r], s, (size_t)rlen[r]);
                            else for (int64_t i = 0; i < rlen[r]; i++) row[rj[r] + i] = s[i * sw];
                        }
                        if (ncol < NR) memset(row + ncol, fill, (size_t)(NR - ncol));
                    }
            if (kp > k) memset(rows + k * NR, fill, (size_t)((kp - k) * NR));
            uint8_t *dst = pk + p * kg * NR * 4;
            for (int64_t g = 0; g < kg; g++) {
                const uint8_t *r0 = rows + 4 * g * NR;
                em_interleave4(r0, r0 + NR, r0 + 2 * NR, r0 + 3 * NR, dst + g * NR * 4);
            }
        }
        free(rows);
    }
}

/* A linear layer's input (M, K) as packed panels: row m is column m, its 4-byte groups
   are copied as they are (k beyond K and rows beyond M hold the fill value). */
static void em_q_pack_rows(const uint8_t *x, int64_t m_, int64_t k, int32_t fill, int32_t flip,
                    uint8_t *pk, int64_t kp) {
    const int64_t npanel = (m_ + NR - 1) / NR, kg = kp / 4;
    const uint8_t f = (uint8_t)fill, x8 = flip ? 0x80 : 0;
    #pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < npanel; p++) {
        uint8_t *dst = pk + p * kg * NR * 4;
        for (int64_t j = 0; j < NR; j++) {
            int64_t m = p * NR + j;
            const uint8_t *src = x + m * k;
            for (int64_t kk = 0; kk < kp; kk++)
                dst[((kk >> 2) * NR + j) * 4 + (kk & 3)] =
                    (m < m_ && kk < k) ? (uint8_t)(src[kk] ^ x8) : f;
        }
    }
}

/* xp = x with a border of `fill` (ph rows, pw columns), int8 bits shifted to uint8. */
static void em_q_pad(const uint8_t *x, int64_t planes, int64_t h_, int64_t w_, int64_t ph,
              int64_t pw, int32_t fill, int32_t flip, uint8_t *xp) {
    const int64_t hp = h_ + 2 * ph, wp = w_ + 2 * pw;
    const uint8_t x8 = flip ? 0x80 : 0;
    #pragma omp parallel for schedule(static)
    for (int64_t q = 0; q < planes; q++) {
        uint8_t *d = xp + q * hp * wp;
        const uint8_t *s = x + q * h_ * w_;
        memset(d, fill, (size_t)(ph * wp));
        memset(d + (ph + h_) * wp, fill, (size_t)(ph * wp));
        for (int64_t i = 0; i < h_; i++) {
            uint8_t *dr = d + (ph + i) * wp;
            memset(dr, fill, (size_t)pw);
            memset(dr + pw + w_, fill, (size_t)pw);
            for (int64_t j = 0; j < w_; j++) dr[pw + j] = s[i * w_ + j] ^ x8;
        }
    }
}

/* Where (oc, col) lives in the output: (n, oc, p) of an (N, OCtot, P) array. */
static inline int64_t em_out_index(int64_t oc, int64_t col, int64_t p_, int64_t octot) {
    return (col / p_) * octot * p_ + oc * p_ + col % p_;
}

#ifdef __AVX512VNNI__
/* Requantize and store 16 columns (col0 ..) of output channel oc from int32 sums. */
static inline void em_store16(__m512i acc, const int32_t *off, int64_t oc, int64_t goc,
                              int64_t c, int64_t cols, const em_requant *q, void *out,
                              int64_t p_, int64_t octot) {
    if (c >= cols) return;
    int64_t nval = cols - c < 16 ? cols - c : 16;
    __m512i a = _mm512_sub_epi32(acc, _mm512_set1_epi32(off[oc]));
    if ((p_ & 15) == 0) {       /* 16 aligned columns never cross an image boundary */
        __mmask16 mk = (__mmask16)((1u << nval) - 1u);
        __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), _mm512_set1_ps(q->mult[oc]),
                                   _mm512_set1_ps(q->bias ? q->bias[oc] : 0.f));
        int64_t i = em_out_index(goc, c, p_, octot);
        if (q->kind == 2) {
            v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(q->lo)), _mm512_set1_ps(q->hi));
            _mm512_mask_storeu_ps((float *)out + i, mk, v);
        } else {
            __m512i t = _mm512_cvtps_epi32(_mm512_mul_ps(v, _mm512_set1_ps(q->inv_so)));
            t = _mm512_add_epi32(t, _mm512_set1_epi32(q->zo));
            t = _mm512_max_epi32(t, _mm512_set1_epi32(q->qmin));
            t = _mm512_min_epi32(t, _mm512_set1_epi32(q->qmax));
            _mm512_mask_cvtepi32_storeu_epi8((int8_t *)out + i, mk, t);
        }
        return;
    }
    int32_t s[16];
    _mm512_storeu_si512(s, a);
    for (int64_t j = 0; j < nval; j++)
        em_store1(q, oc, s[j], out, em_out_index(goc, c + j, p_, octot));
}

/* MR (= 6) rows x 64 columns, all in registers: per 4-byte k group, 4 panel loads and
   6 weight broadcasts feed 24 vpdpbusd. Rows past the end repeat the last row (not stored). */
#define EM_ROW_DECL(r) __m512i c##r##0 = z, c##r##1 = z, c##r##2 = z, c##r##3 = z; \
    const int8_t *w##r = w + (oc0 + (r < mr ? r : mr - 1)) * kp;
#define EM_ROW_STEP(r) { int32_t v_; memcpy(&v_, w##r + 4 * g, 4); \
    __m512i b_ = _mm512_set1_epi32(v_); \
    c##r##0 = _mm512_dpbusd_epi32(c##r##0, a0, b_); c##r##1 = _mm512_dpbusd_epi32(c##r##1, a1, b_); \
    c##r##2 = _mm512_dpbusd_epi32(c##r##2, a2, b_); c##r##3 = _mm512_dpbusd_epi32(c##r##3, a3, b_); }
#define EM_ROW_STORE(r) if (r < mr) { \
    em_store16(c##r##0, off, oc0 + r, ocbase + oc0 + r, col0, cols, q, out, p_, octot); \
    em_store16(c##r##1, off, oc0 + r, ocbase + oc0 + r, col0 + 16, cols, q, out, p_, octot); \
    em_store16(c##r##2, off, oc0 + r, ocbase + oc0 + r, col0 + 32, cols, q, out, p_, octot); \
    em_store16(c##r##3, off, oc0 + r, ocbase + oc0 + r, col0 + 48, cols, q, out, p_, octot); }

static void em_tile(int64_t mr, const int8_t *w, int64_t kp, const uint8_t *pk, int64_t kg,
                    const int32_t *off, int64_t oc0, int64_t col0, int64_t cols,
                    const em_requant *q, void *out, int64_t p_, int64_t octot, int64_t ocbase) {
    const __m512i z = _mm512_setzero_si512();
    EM_ROW_DECL(0) EM_ROW_DECL(1) EM_ROW_DECL(2) EM_ROW_DECL(3) EM_ROW_DECL(4) EM_ROW_DECL(5)
    for (int64_t g = 0; g < kg; g++) {
        const uint8_t *pp = pk + g * NR * 4;
        __m512i a0 = _mm512_loadu_si512(pp), a1 = _mm512_loadu_si512(pp + 64);
        __m512i a2 = _mm512_loadu_si512(pp + 128), a3 = _mm512_loadu_si512(pp + 192);
        EM_ROW_STEP(0) EM_ROW_STEP(1) EM_ROW_STEP(2) EM_ROW_STEP(3) EM_ROW_STEP(4) EM_ROW_STEP(5)
    }
    EM_ROW_STORE(0) EM_ROW_STORE(1) EM_ROW_STORE(2) EM_ROW_STORE(3) EM_ROW_STORE(4)
    EM_ROW_STORE(5)
}

/* The narrow tile for panels of at most 32 columns (late conv layers, small-batch linear):
   12 rows x 32 columns, so no vpdpbusd works on padding. */
#define EM_NROW_DECL(r) __m512i c##r##0 = z, c##r##1 = z; \
    const int8_t *w##r = w + (oc0 + (r < mr ? r : mr - 1)) * kp;
#define EM_NROW_STEP(r) { int32_t v_; memcpy(&v_, w##r + 4 * g, 4); \
    __m512i b_ = _mm512_set1_epi32(v_); \
    c##r##0 = _mm512_dpbusd_epi32(c##r##0, a0, b_); c##r##1 = _mm512_dpbusd_epi32(c##r##1, a1, b_); }
#define EM_NROW_STORE(r) if (r < mr) { \
    em_store16(c##r##0, off, oc0 + r, ocbase + oc0 + r, col0, cols, q, out, p_, octot); \
    em_store16(c##r##1, off, oc0 + r, ocbase + oc0 + r, col0 + 16, cols, q, out, p_, octot); }

static void em_tile_narrow(int64_t mr, const int8_t *w, int64_t kp, const uint8_t *pk,
                           int64_t kg, const int32_t *off, int64_t oc0, int64_t col0,
                           int64_t cols, const em_requant *q, void *out, int64_t p_,
                           int64_t octot, int64_t ocbase) {
    const __m512i z = _mm512_setzero_si512();
    EM_NROW_DECL(0) EM_NROW_DECL(1) EM_NROW_DECL(2) EM_NROW_DECL(3) EM_NROW_DECL(4)
    EM_NROW_DECL(5) EM_NROW_DECL(6) EM_NROW_DECL(7) EM_NROW_DECL(8) EM_NROW_DECL(9)
    EM_NROW_DECL(10) EM_NROW_DECL(11)
    for (int64_t g = 0; g < kg; g++) {
        const uint8_t *pp = pk + g * NR * 4;
        __m512i a0 = _mm512_loadu_si512(pp), a1 = _mm512_loadu_si512(pp + 64);
        EM_NROW_STEP(0) EM_NROW_STEP(1) EM_NROW_STEP(2) EM_NROW_STEP(3) EM_NROW_STEP(4)
        EM_NROW_STEP(5) EM_NROW_STEP(6) EM_NROW_STEP(7) EM_NROW_STEP(8) EM_NROW_STEP(9)
        EM_NROW_STEP(10) EM_NROW_STEP(11)
    }
    EM_NROW_STORE(0) EM_NROW_STORE(1) EM_NROW_STORE(2) EM_NROW_STORE(3) EM_NROW_STORE(4)
    EM_NROW_STORE(5) EM_NROW_STORE(6) EM_NROW_STORE(7) EM_NROW_STORE(8) EM_NROW_STORE(9)
    EM_NROW_STORE(10) EM_NROW_STORE(11)
}

/* The narrowest tile, for at most 16 columns (a linear layer on a small batch): 24 rows x 16
   columns, one accumulator per row. */
#define EM_N1_DECL(r) __m512i c##r = z; \
    const int8_t *w##r = w + (oc0 + (r < mr ? r : mr - 1)) * kp;
#define EM_N1_STEP(r) { int32_t v_; memcpy(&v_, w##r + 4 * g, 4); \
    c##r = _mm512_dpbusd_epi32(c##r, a0, _mm512_set1_epi32(v_)); }
#define EM_N1_STORE(r) if (r < mr) \
    em_store16(c##r, off, oc0 + r, ocbase + oc0 + r, col0, cols, q, out, p_, octot);
#define EM_N1_ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) \
    M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23)

static void em_tile_narrow1(int64_t mr, const int8_t *w, int64_t kp, const uint8_t *pk,
                            int64_t kg, const int32_t *off, int64_t oc0, int64_t col0,
                            int64_t cols, const em_requant *q, void *out, int64_t p_,
                            int64_t octot, int64_t ocbase) {
    const __m512i z = _mm512_setzero_si512();
    EM_N1_ALL(EM_N1_DECL)
    for (int64_t g = 0; g < kg; g++) {
        const __m512i a0 = _mm512_loadu_si512(pk + g * NR * 4);
        EM_N1_ALL(EM_N1_STEP)
    }
    EM_N1_ALL(EM_N1_STORE)
}
#endif

#if !defined(__AVX512VNNI__) && defined(__AVX2__)
/* 4 weight bytes as int16, repeated over the register's four 64-bit lanes. */
static inline __m256i em_w4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_broadcastq_epi64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(v)));
}

/* The AVX2 tile (no VNNI): 2 rows x 16 columns; the panel bytes are widened to int16 and
   vpmaddwd sums pairs of products exactly into int32 (vpmaddubsw would saturate at
   2 * 255 * 127). Column pairs are added once at the end. */
static void em_tile_c(int mr, const int8_t *w, int64_t kp, const uint8_t *pk, int64_t kg,
                      const int32_t *off, int64_t oc0, int64_t col0, int64_t cols,
                      const em_requant *q, void *out, int64_t p_, int64_t octot, int64_t ocbase) {
    for (int r0 = 0; r0 < mr; r0 += 2) {
        const int8_t *w0 = w + (oc0 + r0) * kp;
        const int8_t *w1 = w + (oc0 + (r0 + 1 < mr ? r0 + 1 : r0)) * kp;
        for (int cb = 0; cb < NR && col0 + cb < cols; cb += 16) {
            __m256i s00 = _mm256_setzero_si256(), s01 = s00, s02 = s00, s03 = s00;
            __m256i s10 = s00, s11 = s00, s12 = s00, s13 = s00;
            for (int64_t g = 0; g < kg; g++) {
                const uint8_t *pp = pk + g * NR * 4 + cb * 4;
                __m256i A0 = _mm256_loadu_si256((const __m256i *)pp);
                __m256i A1 = _mm256_loadu_si256((const __m256i *)(pp + 32));
                __m256i a0 = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(A0));
                __m256i a1 = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(A0, 1));
                __m256i a2 = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(A1));
                __m256i a3 = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(A1, 1));
                __m256i x = em_w4(w0 + 4 * g), y = em_w4(w1 + 4 * g);
                s00 = _mm256_add_epi32(s00, _mm256_madd_epi16(a0, x));
                s01 = _mm256_add_epi32(s01, _mm256_madd_epi16(a1, x));
                s02 = _mm256_add_epi32(s02, _mm256_madd_epi16(a2, x));
                s03 = _mm256_add_epi32(s03, _mm256_madd_epi16(a3, x));
                s10 = _mm256_add_epi32(s10, _mm256_madd_epi16(a0, y));
                s11 = _mm256_add_epi32(s11, _mm256_madd_epi16(a1, y));
                s12 = _mm256_add_epi32(s12, _mm256_madd_epi16(a2, y));
                s13 = _mm256_add_epi32(s13, _mm256_madd_epi16(a3, y));
            }
            int32_t t[2][16];
            /* hadd gives columns (0 1 4 5 | 2 3 6 7); the permutation restores the order */
            _mm256_storeu_si256((__m256i *)t[0], _mm256_permute4x64_epi64(
                _mm256_hadd_epi32(s00, s01), 0xD8));
            _mm256_storeu_si256((__m256i *)(t[0] + 8), _mm256_permute4x64_epi64(
                _mm256_hadd_epi32(s02, s03), 0xD8));
            _mm256_storeu_si256((__m256i *)t[1], _mm256_permute4x64_epi64(
                _mm256_hadd_epi32(s10, s11), 0xD8));
            _mm256_storeu_si256((__m256i *)(t[1] + 8), _mm256_permute4x64_epi64(
                _mm256_hadd_epi32(s12, s13), 0xD8));
            for (int r = 0; r < 2 && r0 + r < mr; r++) {
                int64_t oc = oc0 + r0 + r;
                for (int j = 0; j < 16 && col0 + cb + j < cols; j++)
                    em_store1(q, oc, t[r][j] - off[oc], out,
                              em_out_index(ocbase + oc, col0 + cb + j, p_, octot));
            }
        }
    }
}
#elif !defined(__AVX512VNNI__)
/* The portable tile: plain C over the same layout (the compiler vectorizes the j loop). */
static void em_tile_c(int mr, const int8_t *w, int64_t kp, const uint8_t *pk, int64_t kg,
                      const int32_t *off, int64_t oc0, int64_t col0, int64_t cols,
                      const em_requant *q, void *out, int64_t p_, int64_t octot, int64_t ocbase) {
    for (int r = 0; r < mr; r++) {
        int32_t acc[NR];
        for (int j = 0; j < NR; j++) acc[j] = 0;
        const int8_t *wr = w + (oc0 + r) * kp;
        for (int64_t g = 0; g < kg; g++) {
            const uint8_t *pp = pk + g * NR * 4;
            int32_t w0 = wr[4 * g], w1 = wr[4 * g + 1], w2 = wr[4 * g + 2], w3 = wr[4 * g + 3];
            for (int j = 0; j < NR; j++)
                acc[j] += pp[4 * j] * w0 + pp[4 * j + 1] * w1 + pp[4 * j + 2] * w2
                          + pp[4 * j + 3] * w3;
        }
        int64_t oc = oc0 + r;
        for (int j = 0; j < NR && col0 + j < cols; j++)
            em_store1(q, oc, acc[j] - off[oc], out,
                      em_out_index(ocbase + oc, col0 + j, p_, octot));
    }
}

#endif

/* out(N, octot, P)[:, ocbase + oc, :] = requant(w (oc_, kp) @ packed columns - off). */
static void em_q_gemm(const int8_t *w, int64_t oc_, int64_t kp, const uint8_t *pk, int64_t cols,
               const int32_t *off, const float *mult, const float *bias, float inv_so,
               int32_t zo, int32_t qmin, int32_t qmax, int32_t kind, float lo, float hi, void *out,
               int64_t p_, int64_t octot, int64_t ocbase) {
    em_requant q = {mult, bias, inv_so, zo, qmin, qmax, kind, lo, hi};
    const int64_t npanel = (cols + NR - 1) / NR, kg = kp / 4;
#ifdef __AVX512VNNI__
    if (cols <= 16) {
        const int64_t nrow = (oc_ + 23) / 24;
        #pragma omp parallel for schedule(static)
        for (int64_t rb = 0; rb < nrow; rb++) {
            int64_t oc0 = rb * 24, mr = oc_ - oc0 < 24 ? oc_ - oc0 : 24;
            em_tile_narrow1(mr, w, kp, pk, kg, off, oc0, 0, cols, &q, out, p_, octot, ocbase);
        }
        return;
    }
    if (cols <= 32) {
        const int64_t nrow = (oc_ + 11) / 12;
        #pragma omp parallel for schedule(static)
        for (int64_t rb = 0; rb < nrow; rb++) {
            int64_t oc0 = rb * 12, mr = oc_ - oc0 < 12 ? oc_ - oc0 : 12;
            em_tile_narrow(mr, w, kp, pk, kg, off, oc0, 0, cols, &q, out, p_, octot, ocbase);
        }
        return;
    }
#endif
    const int64_t nrow = (oc_ + MR - 1) / MR;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t p = 0; p < npanel; p++) {
        for (int64_t rb = 0; rb < nrow; rb++) {
            const uint8_t *pp = pk + p * kg * NR * 4;
            int64_t oc0 = rb * MR, mr = oc_ - oc0 < MR ? oc_ - oc0 : MR;
#ifdef __AVX512VNNI__
            em_tile(mr, w, kp, pp, kg, off, oc0, p * NR, cols, &q, out, p_, octot, ocbase);
#else
            em_tile_c((int)mr, w, kp, pp, kg, off, oc0, p * NR, cols, &q, out, p_, octot, ocbase);
#endif
        }
    }
}

#ifdef __AVX512F__
/* Depthwise conv of one (n, oc) plane, vectorized along the padded plane: the plane is
   copied once as float (x - za) with a zero border, row pitch wp; the stride-1 output at
   flat position p = oh * wp + ow is sum_t w_t * xp[p + a * dh * wp + b * dw], so each tap is
   one shifted contiguous vector load (columns past OW are computed and dropped; a stride of
   2 computes the stride-1 grid and keeps every other point). Float sums of int products are
   exact below 2^24 (kh * kw <= 512). */
static void em_dw_plane(const uint8_t *plane, int64_t h_, int64_t w_, const int8_t *wk,
                        int64_t kh_, int64_t kw_, int64_t sh, int64_t sw, int64_t ph,
                        int64_t pw, int64_t dh, int64_t dw, int64_t oh_, int64_t ow_,
                        int32_t za, uint8_t x8, const em_requant *q, int64_t oc, void *out,
                        float *xp, float *acc) {
    const int64_t hp = h_ + 2 * ph, wp = w_ + 2 * pw;
    const int64_t rows = (oh_ - 1) * sh + 1;            /* stride-1 rows needed */
    const int64_t npos = rows * wp;
    memset(xp, 0, sizeof(float) * (hp * wp + 32));
    const __m512 zf = _mm512_set1_ps((float)za);
    const __m512i flip = _mm512_set1_epi32(x8);
    for (int64_t i = 0; i < h_; i++) {
        const uint8_t *src = plane + i * w_;
        float *dst = xp + (i + ph) * wp + pw;
        for (int64_t j = 0; j < w_; j += 16) {
            int64_t nv = w_ - j < 16 ? w_ - j : 16;
            __mmask16 mk = (__mmask16)((1u << nv) - 1u);
            __m128i b = _mm_maskz_loadu_epi8(mk, src + j);
            __m512i v = _mm512_xor_si512(_mm512_cvtepu8_epi32(b), flip);
            _mm512_mask_storeu_ps(dst + j, mk, _mm512_sub_ps(_mm512_cvtepi32_ps(v), zf));
        }
    }
    /* stride 1: the whole flat range; a row stride: only the rows kept, and in them only
       the columns up to the last one kept */
    const int64_t step = sh == 1 ? npos : wp, span = sh == 1 ? npos : (ow_ - 1) * sw + 1;
    for (int64_t r0 = 0; r0 < npos; r0 += step * sh)
        for (int64_t p = r0; p < r0 + span; p += 16) {
            __m512 s = _mm512_setzero_ps();
            for (int64_t a = 0; a < kh_; a++)
                for (int64_t b = 0; b < kw_; b++)
                    s = _mm512_fmadd_ps(_mm512_set1_ps((float)wk[a * kw_ + b]),
                                        _mm512_loadu_ps(xp + p + a * dh * wp + b * dw), s);
            _mm512_storeu_ps(acc + p, s);
        }
    const __m512 m = _mm512_set1_ps(q->mult[oc]);
    const __m512 bv = _mm512_set1_ps(q->bias ? q->bias[oc] : 0.f);
    for (int64_t oh = 0; oh < oh_; oh++) {
        const float *row = acc + oh * sh * wp;
        int64_t o = oh * ow_;
        if (sw != 1) {
            for (int64_t ow = 0; ow < ow_; ow++) {
                float v = row[ow * sw] * q->mult[oc] + (q->bias ? q->bias[oc] : 0.f);
                if (q->kind == 2) {
                    ((float *)out)[o + ow] = v < q->lo ? q->lo : (v > q->hi ? q->hi : v);
                } else {
                    int32_t r = (int32_t)nearbyintf(v * q->inv_so) + q->zo;
                    r = r < q->qmin ? q->qmin : (r > q->qmax ? q->qmax : r);
                    if (q->kind == 0) ((uint8_t *)out)[o + ow] = (uint8_t)r;
                    else ((int8_t *)out)[o + ow] = (int8_t)r;
                }
            }
            continue;
        }
        for (int64_t j = 0; j < ow_; j += 16) {
            int64_t nv = ow_ - j < 16 ? ow_ - j : 16;
            __mmask16 mk = (__mmask16)((1u << nv) - 1u);
            __m512 v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, row + j), m, bv);
            if (q->kind == 2) {
                v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(q->lo)), _mm512_set1_ps(q->hi));
                _mm512_mask_storeu_ps((float *)out + o + j, mk, v);
            } else {
                __m512i t = _mm512_cvtps_epi32(_mm512_mul_ps(v, _mm512_set1_ps(q->inv_so)));
                t = _mm512_add_epi32(t, _mm512_set1_epi32(q->zo));
                t = _mm512_max_epi32(t, _mm512_set1_epi32(q->qmin));
                t = _mm512_min_epi32(t, _mm512_set1_epi32(q->qmax));
                _mm512_mask_cvtepi32_storeu_epi8((int8_t *)out + o + j, mk, t);
            }
        }
    }
}
#endif

#ifdef __AVX512F__
/* Depthwise conv for small planes (4x4 and less), 16 channels in the lanes of one vector:
   the block's planes are copied once, channel-interleaved, as float (x - za) with a zero
   border, then each output pixel is kh * kw fused multiply-adds over 16 channels (exact
   below 2^24). Per-plane vectors would be mostly padding there. */
static void em_dw_block16(const uint8_t *x, int64_t n, int64_t c0, int64_t nc, int64_t c_,
                          int64_t h_, int64_t w_, const int8_t *wt, int64_t kh_, int64_t kw_,
                          int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                          int64_t dw, int64_t oh_, int64_t ow_, int32_t za, uint8_t x8,
                          const em_requant *q, void *out, float *xt, float *wk) {
    const int64_t hp = h_ + 2 * ph, wp = w_ + 2 * pw, taps = kh_ * kw_;
    memset(xt, 0, sizeof(float) * hp * wp * 16);
    for (int64_t j = 0; j < nc; j++) {
        const uint8_t *plane = x + (n * c_ + c0 + j) * h_ * w_;
        for (int64_t i = 0; i < h_; i++)
            for (int64_t k = 0; k < w_; k++)
                xt[((i + ph) * wp + k + pw) * 16 + j] = (float)((plane[i * w_ + k] ^ x8) - za);
    }
    for (int64_t t = 0; t < taps; t++)
        for (int64_t j = 0; j < 16; j++)
            wk[t * 16 + j] = j < nc ? (float)wt[(c0 + j) * taps + t] : 0.f;
    const __mmask16 mk = (__mmask16)((1u << nc) - 1u);
    const __m512 m = _mm512_maskz_loadu_ps(mk, q->mult + c0);
    const __m512 bv = q->bias ? _mm512_maskz_loadu_ps(mk, q->bias + c0) : _mm512_setzero_ps();
    const int64_t plane_out = oh_ * ow_;
    for (int64_t oh = 0; oh < oh_; oh++)
        for (int64_t ow = 0; ow < ow_; ow++) {
            __m512 acc = _mm512_setzero_ps();
            for (int64_t a = 0; a < kh_; a++) {
                const float *row = xt + ((oh * sh + a * dh) * wp + ow * sw) * 16;
                for (int64_t b = 0; b < kw_; b++)
                    acc = _mm512_fmadd_ps(_mm512_loadu_ps(row + b * dw * 16),
                                          _mm512_loadu_ps(wk + (a * kw_ + b) * 16), acc);
            }
            __m512 v = _mm512_fmadd_ps(acc, m, bv);
            int64_t base = (n * c_ + c0) * plane_out + oh * ow_ + ow;
            if (q->kind == 2) {
                float r[16];
                v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(q->lo)), _mm512_set1_ps(q->hi));
                _mm512_storeu_ps(r, v);
                for (int64_t j = 0; j < nc; j++) ((float *)out)[base + j * plane_out] = r[j];
            } else {
                int8_t r[16];
                __m512i t = _mm512_cvtps_epi32(_mm512_mul_ps(v, _mm512_set1_ps(q->inv_so)));
                t = _mm512_add_epi32(t, _mm512_set1_epi32(q->zo));
                t = _mm512_max_epi32(t, _mm512_set1_epi32(q->qmin));
                t = _mm512_min_epi32(t, _mm512_set1_epi32(q->qmax));
                _mm_storeu_si128((__m128i *)r, _mm512_cvtepi32_epi8(t));
                for (int64_t j = 0; j < nc; j++) ((int8_t *)out)[base + j * plane_out] = r[j];
            }
        }
}
#endif

/* Depthwise conv (groups == C, OC = C * mult) on NCHW, one (n, oc) plane at a time: the
   input plane is copied once as int16 (x - za) with a zero border, then each tap adds a
   shifted run of it times one weight. */
static void em_q_dwconv(const uint8_t *x, int64_t n_, int64_t c_, int64_t h_, int64_t w_,
                 const int8_t *wt, int64_t mult_, int64_t kh_, int64_t kw_, int64_t sh,
                 int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t oh_,
                 int64_t ow_, int32_t za, int32_t flip, const float *mult, const float *bias,
                 float inv_so, int32_t zo, int32_t qmin, int32_t qmax, int32_t kind,
                 float lo, float hi, void *out) {
    em_requant q = {mult, bias, inv_so, zo, qmin, qmax, kind, lo, hi};
    const int64_t oc_ = c_ * mult_, hp = h_ + 2 * ph, wp = w_ + 2 * pw;
    const uint8_t x8 = flip ? 0x80 : 0;
#ifdef __AVX512F__
    if (mult_ == 1 && kh_ * kw_ <= 512 && h_ * w_ <= EM_DW_SMALL) {
        const int64_t nb = (c_ + 15) / 16;
        #pragma omp parallel
        {
            float *xt = (float *)malloc(sizeof(float) * hp * wp * 16);
            float *wk = (float *)malloc(sizeof(float) * kh_ * kw_ * 16);
            #pragma omp for schedule(static)
            for (int64_t t = 0; t < n_ * nb; t++) {
                int64_t n = t / nb, c0 = (t % nb) * 16;
                em_dw_block16(x, n, c0, c_ - c0 < 16 ? c_ - c0 : 16, c_, h_, w_, wt, kh_, kw_,
                              sh, sw, ph, pw, dh, dw, oh_, ow_, za, x8, &q, out, xt, wk);
            }
            free(xt);
            free(wk);
        }
        return;
    }
    if (kh_ * kw_ <= 512) {
        const int64_t npos = ((oh_ - 1) * sh + 1) * wp;
        const int64_t esz = kind == 2 ? 4 : 1;
        #pragma omp parallel
        {
            float *xpf = (float *)malloc(sizeof(float) * (hp * wp + 32));
            float *acc = (float *)malloc(sizeof(float) * (npos + 16));
            #pragma omp for schedule(static)
            for (int64_t t = 0; t < n_ * oc_; t++) {
                int64_t n = t / oc_, oc = t % oc_;
                em_dw_plane(x + (n * c_ + oc / mult_) * h_ * w_, h_, w_, wt + oc * kh_ * kw_,
                            kh_, kw_, sh, sw, ph, pw, dh, dw, oh_, ow_, za, x8, &q, oc,
                            (char *)out + t * oh_ * ow_ * esz, xpf, acc);
            }
            free(xpf);
            free(acc);
        }
        return;
    }
#endif
    #pragma omp parallel
    {
        int16_t *xp = (int16_t *)malloc(sizeof(int16_t) * hp * wp);
        int32_t *acc = (int32_t *)malloc(sizeof(int32_t) * oh_ * ow_);
        #pragma omp for schedule(static)
        for (int64_t t = 0; t < n_ * oc_; t++) {
            int64_t n = t / oc_, oc = t % oc_, c = oc / mult_;
            const uint8_t *plane = x + (n * c_ + c) * h_ * w_;
            memset(xp, 0, sizeof(int16_t) * hp * wp);
            for (int64_t i = 0; i < h_; i++)
                for (int64_t j = 0; j < w_; j++)
                    xp[(i + ph) * wp + j + pw] = (int16_t)((plane[i * w_ + j] ^ x8) - za);
            memset(acc, 0, sizeof(int32_t) * oh_ * ow_);
            const int8_t *wk = wt + oc * kh_ * kw_;
            for (int64_t a = 0; a < kh_; a++)
                for (int64_t b = 0; b < kw_; b++) {
                    int32_t wv = wk[a * kw_ + b];
                    for (int64_t i = 0; i < oh_; i++) {
                        const int16_t *row = xp + (i * sh + a * dh) * wp + b * dw;
                        int32_t *ar = acc + i * ow_;
                        if (sw == 1)
                            for (int64_t j = 0; j < ow_; j++) ar[j] += row[j] * wv;
                        else
                            for (int64_t j = 0; j < ow_; j++) ar[j] += row[j * sw] * wv;
                    }
                }
            int64_t base = (n * oc_ + oc) * oh_ * ow_;
            for (int64_t i = 0; i < oh_ * ow_; i++) em_store1(&q, oc, acc[i], out, base + i);
        }
        free(xp);
        free(acc);
    }
}

/* conv2d of x (N, C, H, W) by wt (OC, C / groups, KH, KW) into out (N, OC, OH, OW): the
   depthwise kernel when groups == C, else per group: im2col, weight row sums, GEMM. One call
   from Python; scratch memory is allocated here. */
void em_q_conv2d(const uint8_t *x, int64_t n_, int64_t c_, int64_t h_, int64_t w_,
                 const int8_t *wt, int64_t oc_, int64_t kh_, int64_t kw_, int64_t sh,
                 int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t groups,
                 int64_t oh_, int64_t ow_, int32_t za, int32_t flip, const float *mult,
                 const float *bias, float inv_so, int32_t zo, int32_t qmin, int32_t qmax,
                 int32_t kind, float lo, float hi, void *out) {
    const int64_t cg = c_ / groups, ocg = oc_ / groups;
    if (groups == c_ && cg == 1) {
        em_q_dwconv(x, n_, c_, h_, w_, wt, oc_ / c_, kh_, kw_, sh, sw, ph, pw, dh, dw, oh_, ow_,
                    za, flip, mult, bias, inv_so, zo, qmin, qmax, kind, lo, hi, out);
        return;
    }
    const int64_t hp = h_ + 2 * ph, wp = w_ + 2 * pw, k = cg * kh_ * kw_, kp = (k + 3) / 4 * 4;
    const int64_t cols = n_ * oh_ * ow_;
    const uint8_t *xp = x;
    uint8_t *xpad = NULL;
    if (ph || pw || flip) {
        xpad = (uint8_t *)malloc((size_t)(n_ * c_ * hp * wp));
        em_q_pad(x, n_ * c_, h_, w_, ph, pw, za, flip, xpad);
        xp = xpad;
    }
    uint8_t *pk = (uint8_t *)malloc((size_t)(((cols + NR - 1) / NR) * NR * kp));
    int8_t *wpad = kp != k ? (int8_t *)malloc((size_t)(ocg * kp)) : NULL;
    int32_t *off = (int32_t *)malloc(sizeof(int32_t) * ocg);
    for (int64_t g = 0; g < groups; g++) {
        const int8_t *wg = wt + g * ocg * k;
        if (wpad) {
            for (int64_t r = 0; r < ocg; r++) {
                memcpy(wpad + r * kp, wg + r * k, (size_t)k);
                memset(wpad + r * kp + k, 0, (size_t)(kp - k));
            }
            wg = wpad;
        }
        em_q_wsum(wg, ocg, kp, off);
        for (int64_t r = 0; r < ocg; r++) off[r] *= za;
        em_q_im2col(xp, n_, c_, hp, wp, g * cg, cg, kh_, kw_, sh, sw, dh, dw, oh_, ow_, za, pk,
                    kp);
        em_q_gemm(wg, ocg, kp, pk, cols, off, mult + g * ocg, bias ? bias + g * ocg : NULL,
                  inv_so, zo, qmin, qmax, kind, lo, hi, out, oh_ * ow_, oc_, g * ocg);
    }
    free(off);
    free(wpad);
    free(pk);
    free(xpad);
}

#ifdef __AVX512VNNI__
/* linear for a few rows (M <= 8: small-batch heads, decoding): each weight row is streamed
   once, 64 bytes at a time, against every input row (vpdpbusd along K), with its row sum
   taken in the same pass (a dot with ones), so the weights are read once and every lane
   does useful work. */
static void em_q_rowdot(const uint8_t *x, int64_t m_, int64_t k, const int8_t *w, int64_t n_,
                        int32_t za, int32_t flip, const em_requant *q, void *out) {
    const __m512i ones = _mm512_set1_epi8(1), fx = _mm512_set1_epi8(flip ? (char)0x80 : 0);
    #pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < n_; n++) {
        const int8_t *wr = w + n * k;
        __m512i acc[8], sum = _mm512_setzero_si512();
        for (int r = 0; r < 8; r++) acc[r] = _mm512_setzero_si512();
        for (int64_t c = 0; c < k; c += 64) {
            __mmask64 mk = k - c >= 64 ? ~0ULL : (1ULL << (k - c)) - 1;
            __m512i wv = _mm512_maskz_loadu_epi8(mk, wr + c);
            sum = _mm512_dpbusd_epi32(sum, ones, wv);
            for (int64_t r = 0; r < m_; r++) {
                /* lanes past K: the weight bytes are zero, so the product is too */
                __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mk, x + r * k + c), fx);
                acc[r] = _mm512_dpbusd_epi32(acc[r], xv, wv);
            }
        }
        int32_t corr = za * _mm512_reduce_add_epi32(sum);
        for (int64_t r = 0; r < m_; r++)
            em_store1(q, n, _mm512_reduce_add_epi32(acc[r]) - corr, out, r * n_ + n);
    }
}
#endif

/* linear: out (M, N) = requant(x (M, K) @ w (N, K)^T). */
void em_q_linear(const uint8_t *x, int64_t m_, int64_t k, const int8_t *w, int64_t n_,
                 int32_t za, int32_t flip, const float *mult, const float *bias, float inv_so,
                 int32_t zo, int32_t qmin, int32_t qmax, int32_t kind, float lo, float hi,
                 void *out) {
#ifdef __AVX512VNNI__
    if (m_ <= 8) {
        em_requant q = {mult, bias, inv_so, zo, qmin, qmax, kind, lo, hi};
        em_q_rowdot(x, m_, k, w, n_, za, flip, &q, out);
        return;
    }
#endif
    const int64_t kp = (k + 3) / 4 * 4;
    uint8_t *pk = (uint8_t *)malloc((size_t)(((m_ + NR - 1) / NR) * NR * kp));
    em_q_pack_rows(x, m_, k, za, flip, pk, kp);
    int8_t *wpad = NULL;
    if (kp != k) {
        wpad = (int8_t *)malloc((size_t)(n_ * kp));
        for (int64_t r = 0; r < n_; r++) {
            memcpy(wpad + r * kp, w + r * k, (size_t)k);
            memset(wpad + r * kp + k, 0, (size_t)(kp - k));
        }
        w = wpad;
    }
    int32_t *off = (int32_t *)malloc(sizeof(int32_t) * n_);
    em_q_wsum(w, n_, kp, off);
    for (int64_t r = 0; r < n_; r++) off[r] *= za;
    em_q_gemm(w, n_, kp, pk, m_, off, mult, bias, inv_so, zo, qmin, qmax, kind, lo, hi, out, 1,
              n_, 0);
    free(off);
    free(wpad);
    free(pk);
}
