/* ember.tiny int8 kernels: dependency-free C99 for Cortex-M (no malloc, no libc), the same
   source built for the host. Tensors are contiguous NCHW (ember's layout, so a generated
   program passes its arena buffers as they are); activations int8 with a zero point,
   weights int8 symmetric (zero point 0), per-output-channel scales.

   Requantization (ember's int8 kernels and PyTorch's onednn qconv/qlinear numerics):
       acc      = sum (x - x_zp) * w                                  int32
       v        = fmaf((float)acc, mult[oc], bias[oc])    mult = x_scale * w_scale[oc] (f32)
       out      = clamp(round_half_even(v * inv_out_scale) + out_zp, qmin, qmax)
   One fused multiply-add (a VFMA.F32 on a Cortex-M4F, as ember's AVX-512 path) and one
   multiply, so the microcontroller and the host produce the same integers; a fused
   relu/relu6 is qmin/qmax. Round-half-even is done in integer code (no nearbyintf).

   Integer requantization (for cores without an FPU, and the paper's int32-bias graphs), used
   when `qmult` is set; CMSIS-NN's single-rounding form:
       out = clamp(((int64)(acc + qbias[oc]) * qmult[oc] + 2^(t-1)) >> t) + zo),
       t = 31 + qshift[oc]; qmult in [2^30, 2^31): M = qmult * 2^-(31 + qshift)
   It rounds ties up and the bias to an integer, so it can differ from the float form by one
   step; kernels.requant_params_int gives the constants. */
#ifndef TINY_INT8_H
#define TINY_INT8_H
#include <stdint.h>

typedef struct {
    const float *mult;   /* [oc] x_scale * w_scale[oc], float32 */
    const float *bias;   /* [oc] float32, or 0 */
    float inv_so;        /* 1 / output scale */
    int32_t zo;          /* output zero point */
    int32_t qmin, qmax;  /* output clamp: -128..127, or a fused relu/relu6's range */
    const int32_t *qmult;   /* [oc] Q31 multipliers: integer requantization; 0: float */
    const int32_t *qbias;   /* [oc] int32 bias in accumulator units, or 0 */
    const int32_t *qshift;  /* [oc] right shifts after the Q31 product (may be negative) */
} tiny_requant;

/* round(v) with ties to even, for |v| < 2^30 (larger values saturate). */
int32_t tiny_round_half_even(float v);
int8_t tiny_requant1(const tiny_requant *q, int32_t oc, int32_t acc);

/* out (n, oc, oh, ow) = requant(conv2d(x - x_zp, w)): any kernel size, stride, zero-point
   padding, dilation and groups (groups == c == oc: depthwise). w: (oc, c / groups, kh, kw). */
void tiny_conv2d_s8(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w,
                    int32_t x_zp, const int8_t *wt, int32_t oc, int32_t kh, int32_t kw,
                    int32_t sh, int32_t sw, int32_t ph, int32_t pw, int32_t dh, int32_t dw,
                    int32_t groups, const tiny_requant *q, int8_t *out);
int32_t tiny_conv_out_size(int32_t size, int32_t k, int32_t s, int32_t p, int32_t d);

/* out (m, n) = requant((x - x_zp) @ w^T); x (m, k), w (n, k). */
void tiny_linear_s8(const int8_t *x, int32_t m, int32_t k, int32_t x_zp, const int8_t *wt,
                    int32_t n, const tiny_requant *q, int8_t *out);

/* out = clamp(rne(((a - a_zp) * a_scale + (b - b_zp) * b_scale) * inv_so) + zo) elementwise
   (ember's quantized add: dequantize both in float32, add, quantize). */
void tiny_add_s8(const int8_t *a, int32_t a_zp, float a_scale, const int8_t *b, int32_t b_zp,
                 float b_scale, int32_t len, float inv_so, int32_t zo, int32_t qmin,
                 int32_t qmax, int8_t *out);

/* out (n, c, oh, ow) = clamp(rne((float)(sum window (x - x_zp)) * mult) + zo), no padding;
   mult = x_scale / out_scale / (kh * kw) (PyTorch's quantized avg_pool2d). */
void tiny_avgpool2d_s8(const int8_t *x, int32_t n, int32_t c, int32_t h, int32_t w,
                       int32_t x_zp, int32_t kh, int32_t kw, int32_t sh, int32_t sw,
                       float mult, int32_t zo, int8_t *out);

/* out[i] = min(max(x[i], lo), hi): relu is lo = zero point, relu6 also hi = q(6). In place
   is allowed. */
void tiny_clamp_s8(const int8_t *x, int32_t len, int32_t lo, int32_t hi, int8_t *out);

/* Training pieces, on a (b, ch, p) layout that covers both linear (b = batch rows, p = 1)
   and 1x1 conv (b = images, p = pixels). dy: (b, n, p) int8 (symmetric), x: (b, k, p).
   dw[n][k]  = sum_{b,p} dy[b][n][p] * (x[b][k][p] - x_zp)            int32
   db[n]     = sum_{b,p} dy[b][n][p]                                   int32
   dx[b][k][p] = sum_n dy[b][n][p] * w[n][k]                           int32 */
void tiny_grad_weight_s8(const int8_t *dy, const int8_t *x, int32_t x_zp, int32_t b,
                         int32_t n, int32_t k, int32_t p, int32_t *dw);
void tiny_grad_bias_s8(const int8_t *dy, int32_t b, int32_t n, int32_t p, int32_t *db);
void tiny_grad_input_s8(const int8_t *dy, const int8_t *wt, int32_t b, int32_t n, int32_t k,
                        int32_t p, int32_t *dx);

#endif
