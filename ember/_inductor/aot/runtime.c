/* ember AOT runtime: the extern ops of an aot_compile'd program, in plain C99 + OpenMP.
 *
 * Why our own loops and not a BLAS: the library must run where neither Python nor NumPy's
 * private OpenBLAS copy is installed, so everything it needs is in this file (libm and,
 * optionally, libgomp). All tensors are float32, contiguous, row-major. This text is copied
 * verbatim into every generated model source, so the .so depends on nothing else.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define EM_BLK 64
static inline int64_t em_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* C[M,N] = A[M,K] @ B[N,K]^T (+ bias[N]): nn.Linear's layout; both operands read along K. */
static void em_gemm_nt(int64_t M, int64_t N, int64_t K, const float *A, const float *B,
                       const float *bias, float *C) {
  #pragma omp parallel for collapse(2) if (M * N * K > 65536)
  for (int64_t i0 = 0; i0 < M; i0 += 16) {
    for (int64_t j0 = 0; j0 < N; j0 += 16) {
      int64_t i1 = i0 + 16 < M ? i0 + 16 : M, j1 = j0 + 16 < N ? j0 + 16 : N;
      for (int64_t i = i0; i < i1; i++) {
        const float *a = A + i * K;
        for (int64_t j = j0; j < j1; j++) {
          const float *b = B + j * K;
          float acc = 0.0f;
          #pragma omp simd reduction(+:acc)
          for (int64_t k = 0; k < K; k++) acc += a[k] * b[k];
          C[i * N + j] = bias ? acc + bias[j] : acc;
        }
      }
    }
  }
}

/* C[M,N] = A[M,K] @ B[K,N]. A 4 x (2 vectors) tile of C lives in eight registers (GCC/clang
 * vector extensions: 8-float AVX vectors when compiled for AVX, else 4-float SSE ones)
 * while K streams by: each B row strip is read once per 4 rows of A. Edge tiles take a
 * scalar path. */
#ifdef __AVX__
#define EM_VW 8
#else
#define EM_VW 4
#endif
typedef float em_vec __attribute__((vector_size(EM_VW * 4)));
#define EM_MR 4
#define EM_NR (2 * EM_VW)

static inline em_vec em_loadv(const float *p) { em_vec v; memcpy(&v, p, sizeof v); return v; }

#define EM_KC 256     /* K block: a 256 x N panel of B stays in L2 while all rows use it */

static void em_gemm_nn(int64_t M, int64_t N, int64_t K, const float *A, const float *B,
                       float *C) {
  const int64_t tm = (M + EM_MR - 1) / EM_MR, tn = (N + EM_NR - 1) / EM_NR;
  /* the last column strip, when partial, zero-padded to EM_NR once (conv's late layers have
     N = OH*OW of 4 or 16: without it they would run on a scalar path) */
  const int64_t nlast = N - (tn - 1) * EM_NR;
  float *bp = NULL;
  if (nlast != EM_NR && K > 0) {
    bp = (float *)calloc((size_t)(K * EM_NR), sizeof(float));
    if (bp)
      for (int64_t k = 0; k < K; k++)
        memcpy(bp + k * EM_NR, B + k * N + (tn - 1) * EM_NR, sizeof(float) * nlast);
  }
  if (K == 0)
    for (int64_t i = 0; i < M * N; i++) C[i] = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += EM_KC) {
    const int64_t k1 = k0 + EM_KC < K ? k0 + EM_KC : K;
    #pragma omp parallel for if (M * N * (k1 - k0) > 262144)
    for (int64_t t = 0; t < tm * tn; t++) {
      const int64_t i0 = (t / tn) * EM_MR, j0 = (t % tn) * EM_NR;
      const int64_t mr = M - i0 < EM_MR ? M - i0 : EM_MR;
      const int64_t nr = N - j0 < EM_NR ? N - j0 : EM_NR;
      if (nr != EM_NR && !bp) {          /* no memory for the padded strip: scalar path */
        for (int64_t i = i0; i < i0 + mr; i++)
          for (int64_t j = j0; j < j0 + nr; j++) {
            float acc = k0 ? C[i * N + j] : 0.0f;
            for (int64_t k = k0; k < k1; k++) acc += A[i * K + k] * B[k * N + j];
            C[i * N + j] = acc;
          }
        continue;
      }
      const float *bs = nr == EM_NR ? B + j0 : bp;
      const int64_t ldb = nr == EM_NR ? N : EM_NR;
      /* rows past M read row M-1 again; their results are dropped */
      const float *a0 = A + i0 * K;
      const float *a1 = A + (mr > 1 ? i0 + 1 : i0) * K, *a2 = A + (mr > 2 ? i0 + 2 : i0) * K;
      const float *a3 = A + (mr > 3 ? i0 + 3 : i0) * K;
      float tile[EM_MR][EM_NR];
      const size_t vb = sizeof(em_vec);
      if (k0) {                           /* later K blocks add to the partial sums */
        for (int64_t r = 0; r < EM_MR; r++)
          memcpy(tile[r], C + (i0 + (r < mr ? r : 0)) * N + j0, sizeof(float) * nr);
      } else {
        memset(tile, 0, sizeof tile);
      }
      em_vec c00 = em_loadv(tile[0]), c01 = em_loadv(tile[0] + EM_VW);
      em_vec c10 = em_loadv(tile[1]), c11 = em_loadv(tile[1] + EM_VW);
      em_vec c20 = em_loadv(tile[2]), c21 = em_loadv(tile[2] + EM_VW);
      em_vec c30 = em_loadv(tile[3]), c31 = em_loadv(tile[3] + EM_VW);
      for (int64_t k = k0; k < k1; k++) {
        const em_vec b0 = em_loadv(bs + k * ldb), b1 = em_loadv(bs + k * ldb + EM_VW);
        c00 += a0[k] * b0; c01 += a0[k] * b1;
        c10 += a1[k] * b0; c11 += a1[k] * b1;
        c20 += a2[k] * b0; c21 += a2[k] * b1;
        c30 += a3[k] * b0; c31 += a3[k] * b1;
      }
      memcpy(tile[0], &c00, vb); memcpy(tile[0] + EM_VW, &c01, vb);
      memcpy(tile[1], &c10, vb); memcpy(tile[1] + EM_VW, &c11, vb);
      memcpy(tile[2], &c20, vb); memcpy(tile[2] + EM_VW, &c21, vb);
      memcpy(tile[3], &c30, vb); memcpy(tile[3] + EM_VW, &c31, vb);
      for (int64_t r = 0; r < mr; r++)
        memcpy(C + (i0 + r) * N + j0, tile[r], sizeof(float) * nr);
    }
  }
  free(bp);
}

/* nn.Linear with the weight stored transposed (Wt[K,N], done at compile time): the GEMM
 * above, then the bias. */
static void em_linear_t(int64_t M, int64_t N, int64_t K, const float *x, const float *wt,
                        const float *bias, float *y) {
  em_gemm_nn(M, N, K, x, wt, y);
  if (bias)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) y[i * N + j] += bias[j];
}

/* Batched C[b] = A[b] @ B[b] with per-operand batch strides (0 broadcasts). */
static void em_bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A,
                   int64_t sa, const float *B, int64_t sb, float *C) {
  for (int64_t b = 0; b < batch; b++)
    em_gemm_nn(M, N, K, A + b * sa, B + b * sb, C + b * M * N);
}

/* conv2d as im2col + GEMM, per image and group: col[(ci,kh,kw), (oh,ow)], then
 * out[co, (oh,ow)] = W[co, (ci,kh,kw)] @ col. `col` is scratch of Cg*KH*KW*OH*OW floats. */
static void em_conv2d(int64_t N, int64_t C, int64_t H, int64_t W, const float *x,
                      int64_t CO, int64_t KH, int64_t KW, const float *w, const float *bias,
                      int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                      int64_t groups, int64_t OH, int64_t OW, float *out, float *col) {
  const int64_t Cg = C / groups, COg = CO / groups, P = OH * OW, R = Cg * KH * KW;
  if (Cg == 1 && COg == 1) {        /* depthwise: a direct loop, no 1-row GEMMs */
    #pragma omp parallel for collapse(2) if (N * C * P * KH * KW > 65536)
    for (int64_t n = 0; n < N; n++)
      for (int64_t c = 0; c < C; c++) {
        const float *xc = x + (n * C + c) * H * W, *wc = w + c * KH * KW;
        float *oc = out + (n * C + c) * P;
        for (int64_t oh = 0; oh < OH; oh++)
          for (int64_t ow = 0; ow < OW; ow++) {
            float acc = 0.0f;
            for (int64_t kh = 0; kh < KH; kh++) {
              const int64_t ih = oh * sh - ph + kh * dh;
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; kw++) {
                const int64_t iw = ow * sw - pw + kw * dw;
                if (iw >= 0 && iw < W) acc += xc[ih * W + iw] * wc[kh * KW + kw];
              }
            }
            oc[oh * OW + ow] = bias ? acc + bias[c] : acc;
          }
      }
    return;
  }
  for (int64_t n = 0; n < N; n++) {
    for (int64_t g = 0; g < groups; g++) {
      const float *xg = x + (n * C + g * Cg) * H * W;
      #pragma omp parallel for if (R * P > 65536)
      for (int64_t r = 0; r < R; r++) {
        const int64_t ci = r / (KH * KW), kh = (r / KW) % KH, kw = r % KW;
        float *cr = col + r * P;
        for (int64_t oh = 0; oh < OH; oh++) {
          const int64_t ih = oh * sh - ph + kh * dh;
          for (int64_t ow = 0; ow < OW; ow++) {
            const int64_t iw = ow * sw - pw + kw * dw;
            cr[oh * OW + ow] = (ih >= 0 && ih < H && iw >= 0 && iw < W)
                ? xg[(ci * H + ih) * W + iw] : 0.0f;
          }
        }
      }
      float *og = out + (n * CO + g * COg) * P;
      em_gemm_nn(COg, P, R, w + g * COg * R, col, og);
      if (bias)
        for (int64_t co = 0; co < COg; co++)
          for (int64_t p = 0; p < P; p++) og[co * P + p] += bias[g * COg + co];
    }
  }
}

/* batch_norm inference: y = (x - mean) / sqrt(var + eps) * w + b, per channel (dim 1). */
static void em_batch_norm(int64_t N, int64_t C, int64_t S, const float *x, const float *w,
                          const float *b, const float *mean, const float *var, double eps,
                          float *y) {
  #pragma omp parallel for collapse(2) if (N * C * S > 65536)
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      const float inv = (float)(1.0 / sqrt((double)var[c] + eps));
      const float sc = w ? w[c] * inv : inv, m = mean[c], sh = b ? b[c] : 0.0f;
      const float *xp = x + (n * C + c) * S;
      float *yp = y + (n * C + c) * S;
      for (int64_t s = 0; s < S; s++) yp[s] = (xp[s] - m) * sc + sh;
    }
}

/* max_pool2d values (NaN propagates, padding never wins), windows clipped to the input. */
static void em_max_pool2d(int64_t NC, int64_t H, int64_t W, const float *x, int64_t KH,
                          int64_t KW, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                          int64_t dh, int64_t dw, int64_t OH, int64_t OW, float *y) {
  #pragma omp parallel for if (NC * OH * OW * KH * KW > 65536)
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        float m = -INFINITY;
        for (int64_t kh = 0; kh < KH; kh++) {
          const int64_t ih = oh * sh - ph + kh * dh;
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < KW; kw++) {
            const int64_t iw = ow * sw - pw + kw * dw;
            if (iw < 0 || iw >= W) continue;
            const float v = x[(c * H + ih) * W + iw];
            if (v > m || v != v) m = v;
            if (m != m) goto done;
          }
        }
      done:
        y[(c * OH + oh) * OW + ow] = m;
      }
}

/* avg_pool2d; `divisor` > 0 overrides, else count_include_pad decides the window size. */
static void em_avg_pool2d(int64_t NC, int64_t H, int64_t W, const float *x, int64_t KH,
                          int64_t KW, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                          int include_pad, int64_t divisor, int64_t OH, int64_t OW, float *y) {
  #pragma omp parallel for if (NC * OH * OW * KH * KW > 65536)
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t h0 = oh * sh - ph, w0 = ow * sw - pw;
        int64_t h1 = h0 + KH < H + ph ? h0 + KH : H + ph, w1 = w0 + KW < W + pw ? w0 + KW : W + pw;
        const int64_t pool = (h1 - h0) * (w1 - w0);
        h0 = h0 > 0 ? h0 : 0; w0 = w0 > 0 ? w0 : 0;
        h1 = h1 < H ? h1 : H; w1 = w1 < W ? w1 : W;
        float s = 0.0f;
        for (int64_t ih = h0; ih < h1; ih++)
          for (int64_t iw = w0; iw < w1; iw++) s += x[(c * H + ih) * W + iw];
        const int64_t d = divisor > 0 ? divisor : (include_pad ? pool : (h1 - h0) * (w1 - w0));
        y[(c * OH + oh) * OW + ow] = s / (float)d;
      }
}

/* adaptive_avg_pool2d: window [floor(o*I/O), ceil((o+1)*I/O)) per output cell. */
static void em_adaptive_avg_pool2d(int64_t NC, int64_t H, int64_t W, const float *x,
                                   int64_t OH, int64_t OW, float *y) {
  #pragma omp parallel for if (NC * H * W > 65536)
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++) {
      const int64_t h0 = (oh * H) / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
      for (int64_t ow = 0; ow < OW; ow++) {
        const int64_t w0 = (ow * W) / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
        float s = 0.0f;
        for (int64_t ih = h0; ih < h1; ih++)
          for (int64_t iw = w0; iw < w1; iw++) s += x[(c * H + ih) * W + iw];
        y[(c * OH + oh) * OW + ow] = s / (float)((h1 - h0) * (w1 - w0));
      }
    }
}

/* softmax / log_softmax over the middle dim of [outer, n, inner] (max-shifted). */
static void em_softmax(int64_t outer, int64_t n, int64_t inner, const float *x, float *y,
                       int log_) {
  #pragma omp parallel for collapse(2) if (outer * n * inner > 65536)
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const float *xp = x + o * n * inner + i;
      float *yp = y + o * n * inner + i;
      float m = -INFINITY;
      for (int64_t k = 0; k < n; k++) m = xp[k * inner] > m ? xp[k * inner] : m;
      float s = 0.0f;
      for (int64_t k = 0; k < n; k++) {
        const float e = expf(xp[k * inner] - m);
        s += e;
        if (!log_) yp[k * inner] = e;
      }
      if (log_) {
        const float ls = logf(s);
        for (int64_t k = 0; k < n; k++) yp[k * inner] = xp[k * inner] - m - ls;
      } else {
        for (int64_t k = 0; k < n; k++) yp[k * inner] /= s;
      }
    }
}

/* Attention (PyTorch's flash-for-cpu op, no mask or dropout): one query row at a time with
   an online softmax (running max and sum, the output row as accumulator), so no L x S
   scores exist; causal keeps keys j <= i (PyTorch's top-left tril); Hq a multiple of Hk. */
static void em_sdpa(int64_t B, int64_t Hq, int64_t Hk, int64_t L, int64_t S, int64_t E,
                    int64_t Ev, const float *q, const float *k, const float *v, float scale,
                    int causal, float *out) {
  #pragma omp parallel for collapse(2) if (B * Hq * L * S * E > 65536)
  for (int64_t bh = 0; bh < B * Hq; bh++)
    for (int64_t i = 0; i < L; i++) {
      const int64_t b = bh / Hq, hk = (bh % Hq) / (Hq / Hk);
      const float *qp = q + (bh * L + i) * E;
      const float *kb = k + (b * Hk + hk) * S * E, *vb = v + (b * Hk + hk) * S * Ev;
      float *op = out + (bh * L + i) * Ev;
      const int64_t jend = causal ? (i + 1 < S ? i + 1 : S) : S;
      float m = -INFINITY, s = 0.0f;
      for (int64_t e = 0; e < Ev; e++) op[e] = 0.0f;
      for (int64_t j = 0; j < jend; j++) {
        float d = 0.0f;
        for (int64_t e = 0; e < E; e++) d += qp[e] * kb[j * E + e];
        d *= scale;
        if (d > m) {
          const float c = expf(m - d);
          s *= c;
          for (int64_t e = 0; e < Ev; e++) op[e] *= c;
          m = d;
        }
        const float p = expf(d - m);
        s += p;
        for (int64_t e = 0; e < Ev; e++) op[e] += p * vb[j * Ev + e];
      }
      for (int64_t e = 0; e < Ev; e++) op[e] = s > 0.0f ? op[e] / s : NAN;
    }
}

/* y = x permuted: y's dim d walks x's dim perm[d]; `xs` are x's strides in that order. */
static void em_permute(int64_t nd, const int64_t *ysize, const int64_t *xs, const float *x,
                       float *y) {
  int64_t numel = 1;
  for (int64_t d = 0; d < nd; d++) numel *= ysize[d];
  #pragma omp parallel for if (numel > 65536)
  for (int64_t i = 0; i < numel; i++) {
    int64_t rem = i, off = 0;
    for (int64_t d = nd - 1; d >= 0; d--) {
      off += (rem % ysize[d]) * xs[d];
      rem /= ysize[d];
    }
    y[i] = x[off];
  }
}

/* sum (mean when `mean`) over the middle dim of [outer, n, inner]. */
static void em_reduce_sum(int64_t outer, int64_t n, int64_t inner, const float *x, float *y,
                          int mean) {
  #pragma omp parallel for collapse(2) if (outer * n * inner > 65536)
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      float s = 0.0f;
      for (int64_t k = 0; k < n; k++) s += x[(o * n + k) * inner + i];
      y[o * inner + i] = mean ? s / (float)n : s;
    }
}

/* layer_norm over the last n elements of each of `rows` rows (statistics in double). */
static void em_layer_norm(int64_t rows, int64_t n, const float *x, const float *w,
                          const float *b, double eps, float *y) {
  #pragma omp parallel for if (rows * n > 65536)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    double s = 0.0, ss = 0.0;
    for (int64_t k = 0; k < n; k++) s += xr[k];
    const double mean = s / (double)n;
    for (int64_t k = 0; k < n; k++) ss += ((double)xr[k] - mean) * ((double)xr[k] - mean);
    const float inv = (float)(1.0 / sqrt(ss / (double)n + eps)), m = (float)mean;
    for (int64_t k = 0; k < n; k++) {
      float v = (xr[k] - m) * inv;
      if (w) v *= w[k];
      if (b) v += b[k];
      yr[k] = v;
    }
  }
}

/* y[o, off:off+n] = x[o, 0:n] for o < outer, rows of y `ld` long: one input of cat. */
static void em_cat_part(int64_t outer, int64_t n, int64_t ld, int64_t off, const float *x,
                        float *y) {
  for (int64_t o = 0; o < outer; o++) memcpy(y + o * ld + off, x + o * n, sizeof(float) * n);
}

/* a slice's start (PyTorch's rule: negative counts from the end, clamped to [0, size]) */
static inline int64_t em_slice_start(int64_t start, int64_t size) {
  if (start < 0) start += size;
  return start < 0 ? 0 : (start > size ? size : start);
}
