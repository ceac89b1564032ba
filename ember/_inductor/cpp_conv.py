"""C convolution and max pooling for cpp_wrapper graphs (2-D, groups=1, float32/float64).

Why im2col + one GEMM per call: a CNN's training graph holds forward convolutions,
their transposed twins (grad_input) and weight-gradient convolutions whose "kernel" is a
whole image; all three are one matrix product of the weight with the unfolded input over
the whole batch (`col`, K x N*P), which CBLAS runs near peak even when each image is small.
The transposed convolution is the same product with the weight transposed, folded back
(col2im) with accumulation. Inputs may be strided (a graph's permuted views feed the
weight-gradient convolutions), so unfolding reads through strides.

max_pool2d_with_indices follows PyTorch's CPU kernel: a window's maximum and the flat
index (h * W + w) of its last NaN or of its first maximum, padding never chosen.
"""
__all__ = ["conv_code", "pool_code", "conv_call", "pool_call"]

_CONV = r"""
/* a window of n taps, tap j at column j*step - off: [*lo, *hi) are the taps inside
   [0, W) (the rest read padding) */
static inline void em_span_@T@(int64_t off, int64_t W, int64_t step, int64_t n,
                               int64_t *lo, int64_t *hi) {
  const int64_t lo_n = off, hi_n = W - 1 + off;
  int64_t l = lo_n <= 0 ? 0 : (lo_n + step - 1) / step, h = hi_n < 0 ? 0 : hi_n / step + 1;
  if (l > n) l = n;
  if (h > n) h = n;
  *lo = l;
  *hi = h < l ? l : h;
}

/* unfold image x (strided: xs[1..3]) into rows of col: row (c,kh,kw) at col + k*ld + at,
   OH*OW long; outside the image reads 0 */
static void em_im2col_@T@(const @T@ *x, const int64_t *xs, int64_t C, int64_t H, int64_t W,
                          int64_t KH, int64_t KW, int64_t OH, int64_t OW, int64_t sh,
                          int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                          @T@ *col, int64_t ld, int64_t at) {
  for (int64_t c = 0; c < C; c++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        @T@ *row = col + ((c * KH + kh) * KW + kw) * ld + at;
        int64_t lo, hi;
        em_span_@T@(pw - kw * dw, W, sw, OW, &lo, &hi);
        for (int64_t oh = 0; oh < OH; oh++) {
          const int64_t ih = oh * sh - ph + kh * dh;
          @T@ *restrict r = row + oh * OW;
          if (ih < 0 || ih >= H) { memset(r, 0, (size_t)OW * sizeof(@T@)); continue; }
          const @T@ *xr = x + c * xs[1] + ih * xs[2] + (kw * dw - pw) * xs[3];
          for (int64_t ow = 0; ow < lo; ow++) r[ow] = 0;
          if (sw == 1 && xs[3] == 1) memcpy(r + lo, xr + lo, (size_t)(hi - lo) * sizeof(@T@));
          else
            for (int64_t ow = lo; ow < hi; ow++) r[ow] = xr[ow * sw * xs[3]];
          for (int64_t ow = hi; ow < OW; ow++) r[ow] = 0;
        }
      }
}

/* the transpose of em_im2col for one image: row (oh,ow) of colT (K long, at colT +
   (at + oh*OW + ow) * K) holds the window's (c,kh,kw) values; for kernels wider than the
   output (weight-gradient convolutions) its kw-runs are contiguous copies */
static void em_im2col_t_@T@(const @T@ *x, const int64_t *xs, int64_t C, int64_t H,
                            int64_t W, int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                            int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                            int64_t dw, @T@ *colT, int64_t at) {
  const int64_t K = C * KH * KW, xs1 = xs[1], xs2 = xs[2], xs3 = xs[3];
  for (int64_t oh = 0; oh < OH; oh++)
    for (int64_t ow = 0; ow < OW; ow++) {
      @T@ *r = colT + (at + oh * OW + ow) * K;
      int64_t lo, hi;
      em_span_@T@(pw - ow * sw, W, dw, KW, &lo, &hi);
      for (int64_t c = 0; c < C; c++)
        for (int64_t kh = 0; kh < KH; kh++) {
          @T@ *restrict q = r + (c * KH + kh) * KW;
          const int64_t ih = oh * sh - ph + kh * dh;
          if (ih < 0 || ih >= H) { memset(q, 0, (size_t)KW * sizeof(@T@)); continue; }
          const @T@ *xr = x + c * xs1 + ih * xs2 + (ow * sw - pw) * xs3;
          for (int64_t kw = 0; kw < lo; kw++) q[kw] = 0;
          if (dw == 1 && xs3 == 1) memcpy(q + lo, xr + lo, (size_t)(hi - lo) * sizeof(@T@));
          else
            for (int64_t kw = lo; kw < hi; kw++) q[kw] = xr[kw * dw * xs3];
          for (int64_t kw = hi; kw < KW; kw++) q[kw] = 0;
        }
    }
}

/* out[n,co,oh,ow] = bias[co] + sum_{ci,kh,kw} x[n,ci,oh*sh-ph+kh*dh, ow*sw-pw+kw*dw] w[co,ci,kh,kw]
   x strided (xs: 4 element strides), w contiguous, out contiguous. Large images: one GEMM
   per image straight into out (a 1x1 stride-1 convolution reads x itself); small ones
   (weight-gradient convolutions): one GEMM over the whole batch. */
__attribute__((noinline))
static int em_conv2d_@T@(const @T@ *x, const int64_t *xs, const @T@ *w, const @T@ *bias,
                         @T@ *out, int64_t N, int64_t C, int64_t H, int64_t W, int64_t CO,
                         int64_t KH, int64_t KW, int64_t OH, int64_t OW, int64_t sh,
                         int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
  const int64_t K = C * KH * KW, P = OH * OW, NP = N * P;
  if (NP == 0 || CO == 0) return 0;
  if (K == 0) {
    for (int64_t i = 0; i < N * CO; i++)
      for (int64_t p = 0; p < P; p++) out[i * P + p] = bias ? bias[i % CO] : 0;
    return 0;
  }
  if (P >= 256 || (N == 1 && KW <= OW)) {
    const int direct = KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0
                       && xs[3] == 1 && xs[2] == W && xs[1] == H * W;
    @T@ *col = direct ? NULL : (@T@ *)malloc((size_t)(K * P) * sizeof(@T@));
    if (!direct && !col) return 2;
    for (int64_t n = 0; n < N; n++) {
      const @T@ *b = x + n * xs[0];
      if (!direct) {
        em_im2col_@T@(b, xs, C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, col, P, 0);
        b = col;
      }
      @T@ *o = out + n * CO * P;
      @G@(101, 111, 111, CO, P, K, 1, w, K, b, P, 0, o, P);
      if (bias)
        for (int64_t co = 0; co < CO; co++)
          for (int64_t p = 0; p < P; p++) o[co * P + p] += bias[co];
    }
    free(col);
    return 0;
  }
  @T@ *col = (@T@ *)malloc((size_t)(K * NP) * sizeof(@T@));
  @T@ *tmp = (@T@ *)malloc((size_t)(CO * NP) * sizeof(@T@));
  if (!col || !tmp) { free(col); free(tmp); return 2; }
  if (KW > OW) {        /* col stored transposed (NP x K): contiguous kw-runs */
    for (int64_t n = 0; n < N; n++)
      em_im2col_t_@T@(x + n * xs[0], xs, C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw,
                      col, n * P);
    @G@(101, 111, 112, CO, NP, K, 1, w, K, col, K, 0, tmp, NP);
  } else {
    for (int64_t n = 0; n < N; n++)
      em_im2col_@T@(x + n * xs[0], xs, C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, col,
                    NP, n * P);
    @G@(101, 111, 111, CO, NP, K, 1, w, K, col, NP, 0, tmp, NP);
  }
  for (int64_t n = 0; n < N; n++)
    for (int64_t co = 0; co < CO; co++) {
      const @T@ b = bias ? bias[co] : 0;
      const @T@ *t = tmp + co * NP + n * P;
      @T@ *o = out + (n * CO + co) * P;
      for (int64_t p = 0; p < P; p++) o[p] = t[p] + b;
    }
  free(col); free(tmp);
  return 0;
}

/* the transposed convolution: w is [C, CO, KH, KW] (contiguous), x [N, C, H, W] strided,
   out [N, CO, OH, OW] contiguous: out = col2im(w^T @ x) + bias */
__attribute__((noinline))
static int em_conv2d_t_@T@(const @T@ *x, const int64_t *xs, const @T@ *w, const @T@ *bias,
                           @T@ *out, int64_t N, int64_t C, int64_t H, int64_t W,
                           int64_t CO, int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                           int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                           int64_t dw) {
  const int64_t K = CO * KH * KW, P = H * W, NP = N * P;
  for (int64_t n = 0; n < N; n++)
    for (int64_t co = 0; co < CO; co++) {
      const @T@ b = bias ? bias[co] : 0;
      @T@ *o = out + (n * CO + co) * OH * OW;
      for (int64_t p = 0; p < OH * OW; p++) o[p] = b;
    }
  if (NP == 0 || K == 0 || C == 0) return 0;
  @T@ *xp = (@T@ *)malloc((size_t)(C * NP) * sizeof(@T@));
  @T@ *col = (@T@ *)malloc((size_t)(K * NP) * sizeof(@T@));
  if (!xp || !col) { free(xp); free(col); return 2; }
  for (int64_t c = 0; c < C; c++)
    for (int64_t n = 0; n < N; n++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t q = 0; q < W; q++)
          xp[c * NP + n * P + h * W + q] = x[n * xs[0] + c * xs[1] + h * xs[2] + q * xs[3]];
  @G@(101, 112, 111, K, NP, C, 1, w, K, xp, NP, 0, col, NP);
  for (int64_t co = 0; co < CO; co++)
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        const @T@ *row = col + ((co * KH + kh) * KW + kw) * NP;
        for (int64_t n = 0; n < N; n++) {
          @T@ *o = out + (n * CO + co) * OH * OW;
          for (int64_t h = 0; h < H; h++) {
            const int64_t oh = h * sh - ph + kh * dh;
            if (oh < 0 || oh >= OH) continue;
            for (int64_t q = 0; q < W; q++) {
              const int64_t ow = q * sw - pw + kw * dw;
              if (ow >= 0 && ow < OW) o[oh * OW + ow] += row[n * P + h * W + q];
            }
          }
        }
      }
  free(xp); free(col);
  return 0;
}
"""

_POOL = r"""
/* every window inside the image (no padding, no dilation): the scan with no clipping,
   window and stride constants for the usual 2x2 and 3x3 with stride 2 */
static inline __attribute__((always_inline)) void em_maxpool2d_in_@T@(
    const @T@ *x, const int64_t *xs, @T@ *out, int64_t *idx, int64_t N, int64_t C, int64_t W,
    int64_t OH, int64_t OW, const int64_t kh, const int64_t kw, const int64_t sh,
    const int64_t sw) {
  const int64_t xs0 = xs[0], xs1 = xs[1], xs2 = xs[2];   /* idx stores may alias xs */
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      const @T@ *xp = x + n * xs0 + c * xs1;
      @T@ *op = out + (n * C + c) * OH * OW;
      int64_t *ip = idx + (n * C + c) * OH * OW;
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          @T@ best = -INFINITY;
          int64_t bi = oh * sh * W + ow * sw;
          for (int64_t i = 0; i < kh; i++)
            for (int64_t j = 0; j < kw; j++) {
              const int64_t h = oh * sh + i, q = ow * sw + j;
              const @T@ v = xp[h * xs2 + q];
              const int take = (v > best) | (v != v);      /* branch-free: cmov */
              best = take ? v : best;
              bi = take ? h * W + q : bi;
            }
          op[oh * OW + ow] = best;
          ip[oh * OW + ow] = bi;
        }
    }
}

/* max pooling of x [N, C, H, W] (strided) into out and idx [N, C, OH, OW] (contiguous),
   each window (clipped to the image) scanned in PyTorch's order: h, then w */
__attribute__((noinline))
static void em_maxpool2d_@T@(const @T@ *x, const int64_t *xs, @T@ *out, int64_t *idx,
                             int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH,
                             int64_t OW, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                             int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
  if (ph == 0 && pw == 0 && dh == 1 && dw == 1 && xs[3] == 1 && OH > 0 && OW > 0
      && (OH - 1) * sh + kh <= H && (OW - 1) * sw + kw <= W) {
    if (kh == 2 && kw == 2 && sh == 2 && sw == 2)
      em_maxpool2d_in_@T@(x, xs, out, idx, N, C, W, OH, OW, 2, 2, 2, 2);
    else if (kh == 3 && kw == 3 && sh == 2 && sw == 2)
      em_maxpool2d_in_@T@(x, xs, out, idx, N, C, W, OH, OW, 3, 3, 2, 2);
    else
      em_maxpool2d_in_@T@(x, xs, out, idx, N, C, W, OH, OW, kh, kw, sh, sw);
    return;
  }
  const int64_t xs0 = xs[0], xs1 = xs[1], xs2 = xs[2], xs3 = xs[3];
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      const @T@ *xp = x + n * xs0 + c * xs1;
      @T@ *op = out + (n * C + c) * OH * OW;
      int64_t *ip = idx + (n * C + c) * OH * OW;
      for (int64_t oh = 0; oh < OH; oh++) {
        int64_t h0 = oh * sh - ph, h1 = h0 + (kh - 1) * dh + 1;
        if (h1 > H) h1 = H;
        while (h0 < 0) h0 += dh;
        for (int64_t ow = 0; ow < OW; ow++) {
          int64_t w0 = ow * sw - pw, w1 = w0 + (kw - 1) * dw + 1;
          if (w1 > W) w1 = W;
          while (w0 < 0) w0 += dw;
          @T@ best = -INFINITY;
          int64_t bi = h0 * W + w0;
          for (int64_t h = h0; h < h1; h += dh)
            for (int64_t q = w0; q < w1; q += dw) {
              const @T@ v = xp[h * xs2 + q * xs3];
              const int take = (v > best) | (v != v);      /* branch-free: cmov */
              best = take ? v : best;
              bi = take ? h * W + q : bi;
            }
          op[oh * OW + ow] = best;
          ip[oh * OW + ow] = bi;
        }
      }
    }
}
"""


def conv_code(tname, gemm):
    return _CONV.replace("@T@", tname).replace("@G@", gemm)


def pool_code(tname):
    return _POOL.replace("@T@", tname)


def _strides(t, cexpr):
    return "(const int64_t[]){" + ", ".join(cexpr(s) for s in t.strides) + "}"


def conv_call(tname, x, w_ptr, bias_ptr, out, kernel, stride, padding, dilation, transposed,
              cexpr):
    """C statement running one convolution (w_ptr: the weight, contiguous)."""
    n, c, h, wd = x.shape
    co, oh, ow = out.shape[1], out.shape[2], out.shape[3]
    fn = f"em_conv2d_t_{tname}" if transposed else f"em_conv2d_{tname}"
    sizes = ", ".join(cexpr(v) for v in (n, c, h, wd, co, *kernel, oh, ow, *stride, *padding,
                                         *dilation))
    return (f"if ({fn}({x.ptr()}, {_strides(x, cexpr)}, {w_ptr}, {bias_ptr}, {out.ptr()}, "
            f"{sizes})) {{ rc = 2; goto done; }}")


def pool_call(tname, x, out, idx, kernel, stride, padding, dilation, cexpr):
    """C statement running one max_pool2d_with_indices."""
    n, c, h, w = x.shape
    sizes = ", ".join(cexpr(v) for v in (n, c, h, w, out.shape[2], out.shape[3], *kernel,
                                         *stride, *padding, *dilation))
    return (f"em_maxpool2d_{tname}({x.ptr()}, {_strides(x, cexpr)}, {out.ptr()}, "
            f"{idx.ptr()}, {sizes});")
