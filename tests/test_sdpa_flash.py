"""scaled_dot_product_attention's backends against PyTorch: the flash kernel (values and
gradients, fp32/bf16/fp16/fp64, causal, masks, GQA, odd and unequal lengths, strided
inputs), the NumPy fallback without a C compiler, the math path, and the backend choice
(`sdpa_kernel`, the SDP flags) with PyTorch's errors and warnings."""
import warnings

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402
import ember.nn.functional as F  # noqa: E402
from ember.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
from ember.ops import _flash_kernels  # noqa: E402
from torch.nn.attention import SDPBackend as TB  # noqa: E402
from torch.nn.attention import sdpa_kernel as t_sdpa_kernel  # noqa: E402

TF = torch.nn.functional
DT = {"float32": (np.float32, 2e-5), "float64": (np.float64, 1e-10),
      "bfloat16": (ml_dtypes.bfloat16, 3e-2), "float16": (np.float16, 3e-3)}


def _data(shape, dtype, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return a.astype(DT[dtype][0])


def _pair(a, requires_grad=True):
    """The same values as an ember and a torch tensor (bf16 through float32)."""
    e = ember.from_numpy(a.copy())
    if a.dtype == ml_dtypes.bfloat16:
        t = torch.from_numpy(a.astype(np.float32)).bfloat16()
    else:
        t = torch.from_numpy(a.copy())
    if requires_grad:
        e.requires_grad_(True)
        t.requires_grad_(True)
    return e, t


def _np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy().astype(np.float64)
    return np.asarray(t.detach().numpy()).astype(np.float64)


def _close(e, t, tol, what):
    a, b = _np(e), _np(t)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    err = float(np.abs(a - b).max()) if a.size else 0.0
    assert err <= tol * scale, f"{what}: max error {err}"


def _compare(shapes, dtype="float32", mask=None, grad=True, **kw):
    """Run SDPA in both libraries on the same inputs; compare output and q/k/v grads."""
    tol = DT[dtype][1]
    pairs = [_pair(_data(s, dtype, i)) for i, s in enumerate(shapes)]
    if mask is not None:
        m = mask if mask.dtype == np.bool_ else mask.astype(DT[dtype][0])
        em, tm = _pair(m, requires_grad=False)
        kw["attn_mask"] = (em, tm)
    e_kw = {k: (v[0] if isinstance(v, tuple) else v) for k, v in kw.items()}
    t_kw = {k: (v[1] if isinstance(v, tuple) else v) for k, v in kw.items()}
    eo = F.scaled_dot_product_attention(*(p[0] for p in pairs), **e_kw)
    to = TF.scaled_dot_product_attention(*(p[1] for p in pairs), **t_kw)
    assert str(eo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
    _close(eo, to, tol, "output")
    if grad:
        g = _data(tuple(to.shape), dtype, 9)
        eg, tg = _pair(g, requires_grad=False)
        (eo * eg).sum().backward()
        (to * tg).sum().backward()
        for name, (e, t) in zip("qkv", pairs):
            _close(e.grad, t.grad, tol * 4, f"grad {name}")
    return eo


def _is_flash(out):
    return type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"


# ------------------------------------------------------------- flash: values and grads

@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_matches_torch(dtype, causal):
    out = _compare([(2, 3, 70, 16), (2, 3, 70, 16), (2, 3, 70, 16)], dtype, is_causal=causal)
    assert _is_flash(out)


@pytest.mark.parametrize("L,S", [(1, 1), (65, 130), (130, 65), (64, 64), (3, 200)])
@pytest.mark.parametrize("causal", [False, True])
def test_odd_and_unequal_lengths(L, S, causal):
    """Lengths that are not multiples of the 64-row blocks; causal is top-left aligned."""
    out = _compare([(1, 2, L, 8), (1, 2, S, 8), (1, 2, S, 8)], is_causal=causal)
    assert _is_flash(out)


@pytest.mark.parametrize("shape", [(70, 90), (2, 1, 70, 90), (1, 3, 1, 90), (2, 3, 70, 90)])
@pytest.mark.parametrize("kind", ["float", "bool"])
def test_masks_broadcast(shape, kind):
    rng = np.random.default_rng(3)
    mask = rng.random(shape) > 0.3 if kind == "bool" else rng.standard_normal(shape)
    out = _compare([(2, 3, 70, 16), (2, 3, 90, 16), (2, 3, 90, 16)], mask=mask)
    assert _is_flash(out)


def test_mask_with_causal_is_combined_on_flash():
    mask = np.random.default_rng(4).standard_normal((70, 70))
    out = _compare([(1, 2, 70, 16)] * 3, mask=mask, is_causal=True)
    assert _is_flash(out)


def test_fully_masked_rows_give_zeros_and_zero_grads():
    mask = np.ones((10, 12), bool)
    mask[3] = False
    out = _compare([(1, 2, 10, 8), (1, 2, 12, 8), (1, 2, 12, 8)], mask=mask)
    assert _is_flash(out)
    assert not out.detach().numpy()[:, :, 3].any()


@pytest.mark.parametrize("causal", [False, True])
def test_gqa(causal):
    out = _compare([(2, 8, 70, 16), (2, 2, 70, 16), (2, 2, 70, 16)], is_causal=causal,
                   enable_gqa=True)
    assert _is_flash(out)


def test_scale_and_bf16_mask():
    mask = np.random.default_rng(5).standard_normal((1, 1, 33, 40))
    _compare([(1, 2, 33, 32), (1, 2, 40, 32), (1, 2, 40, 32)], "bfloat16", mask=mask,
             scale=0.3)


def test_strided_inputs():
    """(B, L, H, D) projections viewed as (B, H, L, D), and a key expanded over batch."""
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 70, 4, 16)).astype(np.float32) for _ in range(3))
    kb = rng.standard_normal((1, 4, 70, 16)).astype(np.float32)
    eq, ek, ev, ekb = map(ember.from_numpy, (q, k, v, kb))
    tq, tk, tv, tkb = map(torch.from_numpy, (q, k, v, kb))
    e_args = [x.transpose(1, 2) for x in (eq, ek, ev)]
    t_args = [x.transpose(1, 2) for x in (tq, tk, tv)]
    assert not e_args[0].is_contiguous()
    _close(F.scaled_dot_product_attention(*e_args), TF.scaled_dot_product_attention(*t_args),
           2e-5, "transposed")
    e_out = F.scaled_dot_product_attention(e_args[0], ekb.expand(2, -1, -1, -1), e_args[2])
    t_out = TF.scaled_dot_product_attention(t_args[0], tkb.expand(2, -1, -1, -1), t_args[2])
    _close(e_out, t_out, 2e-5, "expanded key")


def test_empty_inputs_match_torch():
    for shapes in ([(0, 2, 5, 8)] * 3, [(1, 2, 0, 8), (1, 2, 5, 8), (1, 2, 5, 8)],
                   [(1, 2, 5, 8), (1, 2, 0, 8), (1, 2, 0, 8)]):
        _compare(shapes)


def test_float64_gradcheck_on_both_paths():
    rng = np.random.default_rng(7)
    q, k, v = (ember.from_numpy(rng.standard_normal((1, 2, 5, 3))).requires_grad_()
               for _ in range(3))
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.MATH):
        with sdpa_kernel(backend):
            assert ember.autograd.gradcheck(
                lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
                (q, k, v))


def test_numpy_fallback_without_a_compiler(monkeypatch):
    """No C compiler: the op runs the same blocked algorithm in NumPy."""
    monkeypatch.setattr(_flash_kernels, "lib", lambda: None)
    mask = np.random.default_rng(8).random((70, 90)) > 0.2
    out = _compare([(1, 4, 70, 16), (1, 2, 90, 16), (1, 2, 90, 16)], mask=mask,
                   enable_gqa=True)
    assert _is_flash(out)
    out = _compare([(1, 2, 130, 8)] * 3, "float64", is_causal=True)
    assert _is_flash(out)


def test_flash_op_errors_match_aten():
    op_e = ember.ops.aten._scaled_dot_product_flash_attention_for_cpu
    op_t = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    q = np.zeros((1, 2, 4, 8), np.float32)
    for args, kw in [((q, q, q, 0.5), {}), ((q[0], q[0], q[0]), {}),
                     ((q, q, q), {"attn_mask": np.zeros((4, 4), bool)}),
                     ((q, q, q), {"attn_mask": np.zeros((4, 4), np.float64)})]:
        conv = [(lambda a: ember.from_numpy(a) if isinstance(a, np.ndarray) else a),
                (lambda a: torch.from_numpy(a) if isinstance(a, np.ndarray) else a)]
        msgs = []
        for op, c in zip((op_e, op_t), conv):
            with pytest.raises(RuntimeError) as info:
                op(*map(c, args), **{k: c(v) for k, v in kw.items()})
            msgs.append(str(info.value))
        assert msgs[0].split(":")[0] == msgs[1].split(":")[0], msgs
        assert msgs[1].split(":")[1].split()[:3] == msgs[0].split(":")[1].split()[:3] or \
            "dtype" in msgs[0], msgs


# ---------------------------------------------------------------- backend selection

def _run_both(backends, args, kw):
    """Call SDPA under each library's sdpa_kernel(backends); return (results, warnings)."""
    res = []
    for lib, kern, B, fn in ((ember, sdpa_kernel, SDPBackend, F.scaled_dot_product_attention),
                             (torch, t_sdpa_kernel, TB, TF.scaled_dot_product_attention)):
        tens = [lib.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                with kern([getattr(B, b) for b in backends]):
                    out = fn(*tens, **kw)
                res.append(("ok", tuple(out.shape)))
            except Exception as e:
                res.append((type(e).__name__, " ".join(str(e).split())))
        res.append([str(x.message).split(" (Triggered")[0] for x in w])
    return res


Q = np.zeros((2, 4, 8, 16), np.float32)
REFUSALS = [
    ("dropout", (Q, Q, Q), {"dropout_p": 0.5}),
    ("3-D", (Q[0], Q[0], Q[0]), {}),
    ("value head dim", (Q, Q, np.zeros((2, 4, 8, 32), np.float32)), {}),
    ("batch", (Q, Q[:1], Q[:1]), {}),
    ("heads without enable_gqa", (Q, Q[:, :2], Q[:, :2]), {}),
    ("gqa not dividing", (Q, Q[:, :3], Q[:, :3]), {"enable_gqa": True}),
    ("3-D mask", (Q, Q, Q, np.zeros((4, 8, 8), np.float32)), {}),
    ("last dim stride", (np.ascontiguousarray(np.swapaxes(Q, -1, -2)).swapaxes(-1, -2), Q, Q),
     {}),
]


@pytest.mark.parametrize("case", REFUSALS, ids=[c[0] for c in REFUSALS])
def test_flash_only_refuses_like_torch(case):
    _, args, kw = case
    e_res, e_warn, t_res, t_warn = _run_both(["FLASH_ATTENTION"], args, kw)
    assert e_res == t_res == ("RuntimeError", "No available kernel. Aborting execution.")
    assert e_warn[0] == t_warn[0] == "Flash attention kernel not used because:"
    assert e_warn[1].split()[:4] == t_warn[1].split()[:4], (e_warn, t_warn)


def test_flash_only_refuses_integer_inputs():
    qi = Q.astype(np.int64)
    e_res, e_warn, t_res, t_warn = _run_both(["FLASH_ATTENTION"], (qi, qi, qi), {})
    assert e_res == t_res
    assert e_warn[1].split(".")[0] == t_warn[1].split(".")[0]


@pytest.mark.parametrize("backends", [[], ["ERROR"], ["EFFICIENT_ATTENTION"],
                                      ["CUDNN_ATTENTION", "OVERRIDEABLE"]])
def test_no_viable_backend(backends):
    e_res, _, t_res, _ = _run_both(backends, (Q, Q, Q), {})
    assert e_res == t_res and e_res[0] == "RuntimeError"
    assert e_res[1].startswith("No viable backend")


@pytest.mark.parametrize("backends,kw", [(["MATH"], {"dropout_p": 0.0}),
                                         (["MATH", "FLASH_ATTENTION"], {}),
                                         (["MATH"], {"is_causal": True})])
def test_served_backends_agree(backends, kw):
    e_res, e_warn, t_res, t_warn = _run_both(backends, (Q, Q, Q), kw)
    assert e_res == t_res and e_res[0] == "ok" and not e_warn and not t_warn


def test_math_path_refuses_mask_with_causal_like_torch():
    args = (Q, Q, Q, np.zeros((8, 8), np.float32))
    e_res, _, t_res, _ = _run_both(["MATH"], args, {"is_causal": True})
    assert e_res == t_res and e_res[0] == "RuntimeError"


def test_choice_follows_flags_and_restores():
    q = ember.randn(1, 2, 4, 8, requires_grad=True)
    assert _is_flash(F.scaled_dot_product_attention(q, q, q))
    with sdpa_kernel(SDPBackend.MATH):
        assert not ember.backends.cuda.flash_sdp_enabled()
        assert not _is_flash(F.scaled_dot_product_attention(q, q, q))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True):
            assert _is_flash(F.scaled_dot_product_attention(q, q, q))
        assert not ember.backends.cuda.flash_sdp_enabled()
    assert ember.backends.cuda.flash_sdp_enabled() and ember.backends.cuda.math_sdp_enabled()
    ember.backends.cuda.enable_flash_sdp(False)
    try:
        assert not _is_flash(F.scaled_dot_product_attention(q, q, q))
    finally:
        ember.backends.cuda.enable_flash_sdp(True)
    # dropout and a mask that wants a gradient go to math, as in PyTorch
    assert not _is_flash(F.scaled_dot_product_attention(q, q, q, dropout_p=0.1))
    m = ember.zeros(4, 4, requires_grad=True)
    assert not _is_flash(F.scaled_dot_product_attention(q, q, q, m))


def test_sdpa_kernel_argument_errors_and_enum():
    for bad in ("flash", 1, (SDPBackend.MATH,)):
        with pytest.raises(AssertionError) as e_info:
            with sdpa_kernel(bad):
                pass
        with pytest.raises(AssertionError) as t_info:
            with t_sdpa_kernel(bad):
                pass
        assert str(e_info.value) == str(t_info.value)
    assert {b.name: b.value for b in SDPBackend} == {b.name: b.value for b in
                                                      TB.__members__.values()}
    assert int(SDPBackend.FLASH_ATTENTION) == int(TB.FLASH_ATTENTION)
    assert ember.nn.attention.sdpa_kernel is sdpa_kernel


def test_autocast_casts_float32_like_torch():
    q = np.random.default_rng(10).standard_normal((1, 2, 6, 8)).astype(np.float32)
    m = np.zeros((6, 6), np.float32)
    for lib, fn in ((ember, F.scaled_dot_product_attention),
                    (torch, TF.scaled_dot_product_attention)):
        t, tm = lib.from_numpy(q), lib.from_numpy(m)
        with lib.autocast("cpu"):
            got = [fn(t, t, t).dtype, fn(t.double(), t.double(), t.double()).dtype,
                   fn(t, t, t, tm).dtype]
        assert [str(d).split(".")[-1] for d in got] == ["bfloat16", "float64", "bfloat16"]


def test_compiled_sdpa_keeps_the_flash_op_whole():
    from ember._prims import is_extern
    from ember.ops.attention import FLASH, FLASH_BACKWARD
    assert is_extern(FLASH) and is_extern(FLASH_BACKWARD)
    x = ember.from_numpy(np.random.default_rng(11).standard_normal((1, 2, 70, 16))
                         .astype(np.float32))
    fn = ember.compile(lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True) * 2)
    eager = F.scaled_dot_product_attention(x, x, x, is_causal=True) * 2
    assert np.allclose(fn(x).numpy(), eager.numpy(), atol=1e-6)


def _child_sdpa(queue):
    x = ember.ones(1, 2, 70, 16)
    queue.put(float(F.scaled_dot_product_attention(x, x, x).sum().item()))


def test_forked_child_runs_the_kernel_on_one_thread():
    """GNU OpenMP's pool does not survive fork: a child (a DataLoader worker) must not
    wait for the parent's threads."""
    import multiprocessing as mp
    x = ember.ones(1, 2, 70, 16)
    expected = float(F.scaled_dot_product_attention(x, x, x).sum().item())
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_sdpa, args=(queue,))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung in the flash kernel")
    assert child.exitcode == 0 and queue.get(timeout=5) == expected
