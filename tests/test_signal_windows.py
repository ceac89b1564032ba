"""ember.signal.windows against torch.signal.windows: values, dtypes, errors."""
import numpy as np
import pytest

import ember
import ember.signal.windows as EW

torch = pytest.importorskip("torch")
TW = torch.signal.windows

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_hamming",
         "hamming", "hann", "kaiser", "nuttall"]
EXTRA = {"exponential": [{"tau": 2.5}], "gaussian": [{"std": 0.7}],
         "kaiser": [{"beta": 3.0}], "general_hamming": [{"alpha": 0.6}]}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("sym", [True, False])
def test_windows_match_torch(name, M, sym):
    for kw in [{}] + EXTRA.get(name, []):
        for dt in ("float32", "float64"):
            e = getattr(EW, name)(M, sym=sym, dtype=getattr(ember, dt), **kw)
            t = getattr(TW, name)(M, sym=sym, dtype=getattr(torch, dt), **kw)
            assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_general_cosine_and_exponential_center():
    a = [0.5, 0.3, 0.2]
    np.testing.assert_allclose(EW.general_cosine(9, a=a).numpy(),
                               TW.general_cosine(9, a=a).numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(EW.exponential(8, center=2.0, sym=False).numpy(),
                               TW.exponential(8, center=2.0, sym=False).numpy(), rtol=1e-6)
    assert EW.hann(5).dtype == ember.get_default_dtype()


@pytest.mark.parametrize("call", [
    lambda W, lib: W.hann(-1),
    lambda W, lib: W.hann(4, dtype=lib.int64),
    lambda W, lib: W.exponential(4, tau=0.0),
    lambda W, lib: W.exponential(4, center=1.0),
    lambda W, lib: W.gaussian(4, std=-1.0),
    lambda W, lib: W.kaiser(4, beta=-1.0),
    lambda W, lib: W.general_cosine(4, a=[]),
    lambda W, lib: W.general_cosine(4, a=3),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TW, torch)
    with pytest.raises(type(te.value)) as ee:
        call(EW, ember)
    assert str(ee.value).replace("torch.", "") == str(te.value).replace("torch.", "")
