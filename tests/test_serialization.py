"""ember.save / ember.load against torch.save / torch.load, both directions, and
ember.utils.safetensors."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch

import ember
import ember.serialization as S

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def _np(t):
    """A torch or ember tensor's values as NumPy (bfloat16 via float32)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    return t.detach().float().numpy() if t.dtype == ember.bfloat16 else t.detach().numpy()


def _torch_tensor(name, shape=(2, 3), seed=0):
    rng = np.random.default_rng(seed)
    dt = getattr(torch, name)
    if name == "bool":
        return torch.from_numpy(rng.random(shape) > 0.5)
    if name.startswith("complex"):
        return torch.complex(torch.from_numpy(rng.standard_normal(shape)),
                             torch.from_numpy(rng.standard_normal(shape))).to(dt)
    if dt.is_floating_point:
        return torch.from_numpy(rng.standard_normal(shape)).to(dt)
    return torch.from_numpy(rng.integers(-100 if name != "uint8" else 0, 100, shape)).to(dt)


def _same(e, t):
    """ember tensor e equals torch tensor t: values, dtype, shape."""
    assert isinstance(e, ember.Tensor), type(e)
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(_np(e), _np(t))


def _shares(a, b):
    return np.shares_memory(a._data, b._data)


# ------------------------------------------------------------ torch.save -> ember.load

@pytest.mark.parametrize("name", DTYPES)
def test_torch_to_ember_dtypes(tmp_path, name):
    t = _torch_tensor(name)
    torch.save({"x": t, "col": t[:, 1], "t": t.t()}, tmp_path / "a.pt")
    out = ember.load(tmp_path / "a.pt")
    _same(out["x"], t)
    _same(out["col"], t[:, 1])
    _same(out["t"], t.t())
    assert out["t"].stride() == t.t().stride()


def test_torch_to_ember_sharing_and_offsets(tmp_path):
    base = torch.arange(12.0)
    obj = {"base": base, "view": base[3:9].view(2, 3), "again": base, "exp": base[:1].expand(4)}
    torch.save(obj, tmp_path / "a.pt")
    out = ember.load(tmp_path / "a.pt")
    assert out["again"] is out["base"]
    _same(out["view"], obj["view"])
    _same(out["exp"], obj["exp"])
    assert out["exp"].stride() == (0,)
    assert _shares(out["base"], out["view"]) and _shares(out["base"], out["exp"])
    out["base"][4] = 100.0          # one storage: the view sees the write
    assert out["view"][0, 1].item() == 100.0


def test_torch_state_dict_to_ember(tmp_path):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    sd = m.state_dict()
    torch.save(sd, tmp_path / "sd.pt")
    out = ember.load(tmp_path / "sd.pt", map_location="cpu")
    assert type(out) is collections.OrderedDict
    assert list(out) == list(sd)
    assert out._metadata == sd._metadata
    for k in sd:
        _same(out[k], sd[k])
    em = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    em.load_state_dict(out)
    for k, v in em.state_dict().items():
        _same(v, sd[k])


def test_torch_containers_to_ember(tmp_path):
    obj = {"list": [1, 2.5, "s", b"bytes", None, True], "tuple": (1, (2, 3)),
           "set": {1, 2}, "complex": 1 + 2j, "od": collections.OrderedDict(a=1),
           "size": torch.Size([2, 3]), "dtype": torch.bfloat16, "device": torch.device("cpu"),
           "empty": torch.zeros(0, 3), "scalar": torch.tensor(3.5), "big": 2 ** 70,
           "param": torch.nn.Parameter(torch.ones(2)), "ba": bytearray(b"xy"),
           "counter": collections.Counter("aab")}
    torch.save(obj, tmp_path / "c.pt")
    out = ember.load(tmp_path / "c.pt")
    for k in ("list", "tuple", "set", "complex", "od", "big", "ba", "counter"):
        assert out[k] == obj[k] and type(out[k]) is type(obj[k])
    assert out["size"] == ember.Size([2, 3]) and type(out["size"]) is ember.Size
    assert out["dtype"] is ember.bfloat16
    assert out["device"] == ember.device("cpu")
    _same(out["empty"], obj["empty"])
    _same(out["scalar"], obj["scalar"])
    assert isinstance(out["param"], ember.nn.Parameter) and out["param"].requires_grad
    _same(out["param"], obj["param"])


def test_torch_requires_grad_and_file_object(tmp_path):
    t = torch.randn(3, requires_grad=True)
    buf = io.BytesIO()
    torch.save([t, t.detach()], buf)
    buf.seek(0)
    a, b = ember.load(buf)
    assert a.requires_grad and not b.requires_grad and a.is_leaf
    _same(a, t)


# ------------------------------------------------------------ ember.save -> torch.load

def _ember_tensor(name, shape=(2, 3)):
    return ember.from_numpy(_np(_torch_tensor(name, shape)).copy()).to(getattr(ember, name)) \
        if name == "bfloat16" else ember.from_numpy(_torch_tensor(name, shape).numpy().copy())


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize("name", DTYPES)
def test_ember_to_torch_dtypes(tmp_path, name, mmap):
    e = _ember_tensor(name)
    ember.save({"x": e, "row": e[1], "t": e.t()}, tmp_path / "a.pt")
    out = torch.load(tmp_path / "a.pt", weights_only=True, mmap=mmap)
    for k, v in (("x", e), ("row", e[1]), ("t", e.t())):
        _same(v, out[k])
    assert out["t"].stride() == tuple(e.t().stride())
    assert out["x"].untyped_storage().data_ptr() == out["row"].untyped_storage().data_ptr()
    assert out["row"].storage_offset() == 3


def test_ember_to_torch_sharing(tmp_path):
    base = ember.arange(10.0)
    obj = [base, base[2:6], base[::2], base.reshape(2, 5).t()]
    ember.save(obj, tmp_path / "s.pt")
    out = torch.load(tmp_path / "s.pt", weights_only=True)
    ptr = out[0].untyped_storage().data_ptr()
    assert all(o.untyped_storage().data_ptr() == ptr for o in out)
    for e, t in zip(obj, out):
        _same(e, t)
    assert [t.storage_offset() for t in out] == [0, 2, 0, 0]
    out[0][3] = -1.0
    assert out[1][1].item() == -1.0


def test_ember_state_dict_to_torch(tmp_path):
    ember.manual_seed(0)
    em = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    sd = em.state_dict()
    ember.save(sd, tmp_path / "sd.pt")
    out = torch.load(tmp_path / "sd.pt", weights_only=True)
    assert list(out) == list(sd) and out._metadata == sd._metadata
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    m.load_state_dict(out)
    for k, v in sd.items():
        _same(v, m.state_dict()[k])


def test_ember_containers_to_torch(tmp_path):
    p = ember.nn.Parameter(ember.ones(2))
    obj = {"list": [1, 2.5, "s", b"bytes", None, True], "tuple": (1, (2, 3)), "set": {1, 2},
           "complex": 1 + 2j, "size": ember.Size([2, 3]), "dtype": ember.bfloat16,
           "device": ember.device("cpu"), "empty": ember.zeros(0, 3), "param": p,
           "scalar": ember.tensor(2.5, requires_grad=True), "big": -(2 ** 70)}
    ember.save(obj, tmp_path / "c.pt")
    out = torch.load(tmp_path / "c.pt", weights_only=True)
    for k in ("list", "tuple", "set", "complex", "big"):
        assert out[k] == obj[k] and type(out[k]) is type(obj[k])
    assert out["size"] == torch.Size([2, 3]) and type(out["size"]) is torch.Size
    assert out["dtype"] is torch.bfloat16 and out["device"] == torch.device("cpu")
    assert isinstance(out["param"], torch.nn.Parameter) and out["param"].requires_grad
    assert out["scalar"].requires_grad and out["scalar"].shape == ()
    _same(obj["empty"], out["empty"])


def test_ember_records_layout(tmp_path):
    ember.save([ember.ones(3), ember.zeros(5, dtype=ember.int8)], tmp_path / "r.pt")
    with zipfile.ZipFile(tmp_path / "r.pt") as z:
        names = z.namelist()
        assert names == ["archive/data.pkl", "archive/.format_version",
                         "archive/.storage_alignment", "archive/byteorder", "archive/data/0",
                         "archive/data/1", "archive/version", "archive/.data/serialization_id"]
        assert z.read("archive/byteorder") == b"little"
        assert z.read("archive/data/0") == np.ones(3, np.float32).tobytes()
        raw = open(tmp_path / "r.pt", "rb").read()
        for name in ("archive/data/0", "archive/data/1"):
            info = z.getinfo(name)
            assert S._record_offset(io.BytesIO(raw), info) % 64 == 0
        assert z.read("archive/data.pkl")[:2] == b"\x80\x02"       # protocol 2
        assert b"ctorch._utils\n_rebuild_tensor_v2\n" in z.read("archive/data.pkl")


def test_zip64_records(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "_ZIP64_LIMIT", 8)        # every record takes the zip64 path
    e = ember.arange(6.0)
    ember.save({"x": e}, tmp_path / "z.pt")
    assert zipfile.ZipFile(tmp_path / "z.pt").testzip() is None
    _same(e, torch.load(tmp_path / "z.pt", weights_only=True)["x"])
    _same(ember.load(tmp_path / "z.pt", mmap=True)["x"], torch.arange(6.0))


def test_save_view_as_other_dtype_errors(tmp_path):
    x = ember.arange(4.0)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        ember.save([x, x.view(ember.int32)], tmp_path / "v.pt")
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        tx = torch.arange(4.0)
        torch.save([tx, tx.view(torch.int32)], tmp_path / "v.pt")


# ------------------------------------------------------------- ember <-> ember, options

def test_round_trip_mmap_and_file_objects(tmp_path):
    x = ember.randn(4, 5)
    obj = {"x": x, "v": x[1:3], "bf": x.to(ember.bfloat16), "c": ember.randn(3, dtype=ember.cfloat)}
    ember.save(obj, tmp_path / "r.pt")
    for kw in ({}, {"mmap": True}, {"map_location": "cpu"},
               {"map_location": ember.device("cpu")}, {"map_location": lambda s, loc: s},
               {"map_location": {"cpu": "cpu"}}, {"weights_only": False}):
        out = ember.load(tmp_path / "r.pt", **kw)
        for k in obj:
            np.testing.assert_array_equal(_np(out[k]), _np(obj[k]))
        assert _shares(out["x"], out["v"])
    before = open(tmp_path / "r.pt", "rb").read()
    out = ember.load(open(tmp_path / "r.pt", "rb"), mmap=True)
    out["x"].add_(1.0)                   # copy-on-write: the file keeps its bytes
    assert open(tmp_path / "r.pt", "rb").read() == before
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    np.testing.assert_array_equal(_np(ember.load(buf)["x"]), _np(x))
    with pytest.raises(ValueError, match="mmap"):
        ember.load(io.BytesIO(before), mmap=True)


def test_resave_loaded_keeps_sharing(tmp_path):
    t = torch.arange(8.0)
    torch.save([t, t[2:]], tmp_path / "a.pt")
    for mmap in (False, True):
        a, b = ember.load(tmp_path / "a.pt", mmap=mmap)
        ember.save([a, b], tmp_path / "b.pt")
        ta, tb = torch.load(tmp_path / "b.pt", weights_only=True)
        assert tb.storage_offset() == 2
        assert ta.untyped_storage().data_ptr() == tb.untyped_storage().data_ptr()


def test_parameter_and_module_weights_only_false(tmp_path):
    lin = ember.nn.Linear(2, 3)
    ember.save(lin, tmp_path / "m.pt")
    with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed"):
        ember.load(tmp_path / "m.pt")
    back = ember.load(tmp_path / "m.pt", weights_only=False)
    assert isinstance(back, ember.nn.Linear)
    assert isinstance(back.weight, ember.nn.Parameter)
    np.testing.assert_array_equal(back.weight.detach().numpy(), lin.weight.detach().numpy())


def test_map_location_other_device(tmp_path):
    ember.save(ember.ones(2), tmp_path / "a.pt")
    with pytest.raises(RuntimeError):
        ember.load(tmp_path / "a.pt", map_location="cuda:0")
    with pytest.raises(TypeError):
        ember.load(tmp_path / "a.pt", map_location=lambda s, loc: 3)


def test_legacy_and_garbage_files(tmp_path):
    t = torch.arange(6.0).reshape(2, 3)
    torch.save({"t": t, "col": t[:, 1], "n": 3}, tmp_path / "legacy.pt",
               _use_new_zipfile_serialization=False)
    for kw in ({}, {"weights_only": False}, {"map_location": "cpu"}):
        out = ember.load(tmp_path / "legacy.pt", **kw)        # PyTorch reads it: so does ember
        _same(out["t"], t)
        _same(out["col"], t[:, 1])
        assert out["n"] == 3 and _shares(out["t"], out["col"])
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        ember.load(tmp_path / "legacy.pt", mmap=True)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(pickle.UnpicklingError, match="junk.pt"):
        ember.load(tmp_path / "junk.pt")


# ------------------------------------------------------------------ malicious files

class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (exec, (f"open({str(self.path)!r}, 'w').close()",))


class _EvilSystem:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


@pytest.mark.parametrize("evil", [_Evil, _EvilSystem])
def test_malicious_file_runs_nothing(tmp_path, evil):
    marker = tmp_path / "pwned"
    ember.save({"w": ember.ones(2), "x": evil(marker)}, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError) as info:
        ember.load(tmp_path / "evil.pt")
    assert str(info.value).startswith("Weights only load failed")
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError) as tinfo:      # torch refuses it too
        torch.load(tmp_path / "evil.pt", weights_only=True)
    assert str(info.value).startswith(str(tinfo.value))       # with the same message
    assert not marker.exists()
    ember.load(tmp_path / "evil.pt", weights_only=False)   # the file really is malicious
    assert marker.exists()


def test_safe_globals(tmp_path):
    ember.save({"c": collections.namedtuple}, tmp_path / "g.pt")
    with pytest.raises(pickle.UnpicklingError):
        ember.load(tmp_path / "g.pt")
    with S.safe_globals([collections.namedtuple]):
        assert ember.load(tmp_path / "g.pt")["c"] is collections.namedtuple
    assert S.get_safe_globals() == []


# ------------------------------------------------------------------ atomic writes

def _old_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"old": ember.ones(3)}, path)
    return path, path.read_bytes()


def test_atomic_write_failure_mid_write(tmp_path, monkeypatch):
    path, before = _old_file(tmp_path)
    real = S._write_zip

    def failing(f, records):
        f.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    monkeypatch.setattr(S, "_write_zip", failing)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"new": ember.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]          # no temporary file left
    monkeypatch.setattr(S, "_write_zip", real)
    ember.save({"new": ember.zeros(2)}, path)
    assert list(ember.load(path)) == ["new"]
    assert oct(os.stat(path).st_mode & 0o777) != "0o600"       # not mkstemp's mode


def test_atomic_write_unpicklable(tmp_path):
    path, before = _old_file(tmp_path)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ember.save({"f": lambda: 1}, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


# ------------------------------------------------------------------ safetensors

def test_safetensors_round_trip(tmp_path):
    from safetensors.torch import load_file as t_load_file, save_file as t_save_file
    from ember.utils import safetensors as est
    ember.manual_seed(0)
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    sd = dict(m.state_dict())
    sd["bf"] = ember.randn(2, 2).to(ember.bfloat16)
    sd["mask"] = ember.tensor([True, False])
    sd["nc"] = ember.randn(3, 2).t()
    est.save_file(sd, tmp_path / "m.safetensors", metadata={"format": "pt"})
    back = est.load_file(tmp_path / "m.safetensors")
    assert set(back) == set(sd)
    for k, v in sd.items():
        assert back[k].dtype is v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(_np(back[k]), _np(v))
    tt = t_load_file(tmp_path / "m.safetensors")
    for k, v in sd.items():
        _same(v, tt[k])
    t_save_file(tt, tmp_path / "t.safetensors")
    for k, v in est.load_file(tmp_path / "t.safetensors").items():
        _same(v, tt[k])
    assert est.load(est.save(sd))["nc"].equal(sd["nc"])
    with pytest.raises(ValueError, match="complex128"):
        est.save({"c": ember.zeros(2, dtype=ember.complex128)})


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickle_protocols(tmp_path, protocol):
    obj = {"a": ember.arange(3.0), "b": [1, "x"]}
    ember.save(obj, tmp_path / "p.pt", pickle_protocol=protocol)
    out = torch.load(tmp_path / "p.pt", weights_only=protocol == 2)
    _same(obj["a"], out["a"])
    assert ember.load(tmp_path / "p.pt")["b"] == [1, "x"]
    with pytest.raises(ValueError):
        ember.save(obj, tmp_path / "p.pt", pickle_protocol=1)


def test_weights_only_default_and_pickle_module(tmp_path):
    """As torch.load: weights_only unset means True, unless a pickle_module is given
    (then False); weights_only=True with a pickle_module is a RuntimeError."""
    ember.save({"f": collections.namedtuple}, tmp_path / "g.pt")
    for lib in (torch, ember):
        with pytest.raises(pickle.UnpicklingError):
            lib.load(tmp_path / "g.pt")
        assert lib.load(tmp_path / "g.pt", pickle_module=pickle)["f"] is collections.namedtuple
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit"):
            lib.load(tmp_path / "g.pt", pickle_module=pickle, weights_only=True)
