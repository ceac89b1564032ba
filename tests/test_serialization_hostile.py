"""Hostile checkpoints against ember.load(weights_only=True), each compared with
torch.load(weights_only=True) on the same bytes, and the clean-up of temporaries that
killed saves leave behind.

Every hostile pickle is written opcode by opcode (no pickler helps the attacker), loaded
both inside a valid zip checkpoint and as a raw (legacy-format) file, and must: raise
(UnpicklingError, or exactly what PyTorch raises), run nothing (its marker file is never
created) and change no ember class, function, dtype or module (snapshots before/after)."""
import collections
import copyreg
import io
import os
import pickle
import signal
import struct
import subprocess
import sys
import time
import types

import numpy as np
import pytest
import torch

import ember
import ember.serialization as S
from ember import _atomic_file

pytestmark = pytest.mark.filterwarnings("ignore:Detected pickle protocol")

# ------------------------------------------------------------------ pickle opcodes

P2, P4 = b"\x80\x02", b"\x80\x04"
STOP, MARK, TUPLE, TUPLE1, TUPLE2, TUPLE3 = b".", b"(", b"t", b"\x85", b"\x86", b"\x87"
REDUCE, BUILD, NEWOBJ, NEWOBJ_EX, NONE = b"R", b"b", b"\x81", b"\x92", b"N"
EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE, EMPTY_SET = b"}", b"]", b")", b"\x8f"
SETITEM, SETITEMS, APPEND, APPENDS, ADDITEMS = b"s", b"u", b"a", b"e", b"\x90"
STACK_GLOBAL, BINPERSID = b"\x93", b"Q"


def G(module, name):
    """GLOBAL module.name"""
    return b"c" + f"{module}\n{name}\n".encode()


def U(s):
    """BINUNICODE s"""
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def I(n):  # noqa: E743
    """BININT n"""
    return b"J" + struct.pack("<i", n)


def _setattr_state(name, value=U("pwned")):
    """BUILD's (None, {name: value}) state: pickle's load_build then runs setattr(top, ...)."""
    return NONE + EMPTY_DICT + U(name) + value + SETITEM + TUPLE2


def _build_on(target, name="numel", value=U("pwned")):
    return P2 + target + _setattr_state(name, value) + BUILD + STOP


def _dict_build_on(target, name="__repr__"):
    return P2 + target + EMPTY_DICT + U(name) + U("pwned") + SETITEM + BUILD + STOP


def _touch(marker):
    return f"open({str(marker)!r}, 'w').close()"


EXT_CODE = 0xE7         # an extension code registered to os.system for the EXT1 case


def _cases(m):
    """name -> hostile pickle bytes; `m` is the marker file a successful attack creates."""
    sh = f"touch {m}"
    return {
        "os.system": P2 + G("os", "system") + U(sh) + TUPLE1 + REDUCE + STOP,
        "posix.system": P2 + G("posix", "system") + U(sh) + TUPLE1 + REDUCE + STOP,
        "nt.system": P2 + G("nt", "system") + U(sh) + TUPLE1 + REDUCE + STOP,
        "sys.modules": P2 + G("sys", "modules") + STOP,
        "builtins.exec": P2 + G("builtins", "exec") + U(_touch(m)) + TUPLE1 + REDUCE + STOP,
        "__builtin__.eval": P2 + G("__builtin__", "eval") + U(_touch(m)) + TUPLE1 + REDUCE
        + STOP,
        "builtins.eval": P2 + G("builtins", "eval") + U(_touch(m)) + TUPLE1 + REDUCE + STOP,
        "builtins.getattr": P2 + G("builtins", "getattr") + G("torch", "Size") + U("numel")
        + TUPLE2 + REDUCE + STOP,
        "builtins.setattr": P2 + G("builtins", "setattr") + G("torch", "Size") + U("numel")
        + U("x") + TUPLE3 + REDUCE + STOP,
        "subprocess.call": P2 + G("subprocess", "call") + EMPTY_LIST + U("touch") + APPEND
        + U(str(m)) + APPEND + TUPLE1 + REDUCE + STOP,
        "subprocess.Popen": P2 + G("subprocess", "Popen") + U(sh) + TUPLE1 + REDUCE + STOP,
        "copyreg._reconstructor": P2 + G("copyreg", "_reconstructor") + G("builtins", "object")
        + G("builtins", "object") + NONE + TUPLE3 + REDUCE + STOP,
        "STACK_GLOBAL exec": P4 + U("builtins") + U("exec") + STACK_GLOBAL + U(_touch(m))
        + TUPLE1 + REDUCE + STOP,
        "STACK_GLOBAL os.system": P4 + U("os") + U("system") + STACK_GLOBAL + U(sh) + TUPLE1
        + REDUCE + STOP,
        "INST os.system": P2 + MARK + b"S'" + sh.encode() + b"'\n" + b"ios\nsystem\n" + STOP,
        "OBJ os.system": P2 + MARK + G("os", "system") + U(sh) + b"o" + STOP,
        "EXT1": P2 + b"\x82" + bytes([EXT_CODE]) + U(sh) + TUPLE1 + REDUCE + STOP,
        "EXT2": P2 + b"\x83" + struct.pack("<H", EXT_CODE) + U(sh) + TUPLE1 + REDUCE + STOP,
        "EXT4": P2 + b"\x84" + struct.pack("<i", EXT_CODE) + U(sh) + TUPLE1 + REDUCE + STOP,
        "NEWOBJ_EX Size": P4 + G("torch", "Size") + EMPTY_TUPLE + EMPTY_DICT + NEWOBJ_EX + STOP,
        "NEWOBJ function": P2 + G("torch._utils", "_rebuild_tensor_v2") + EMPTY_TUPLE + NEWOBJ
        + STOP,
        "NEWOBJ os.system": P2 + G("os", "system") + EMPTY_TUPLE + NEWOBJ + STOP,
        "persistent id module": P2 + U("module") + G("os", "system") + TUPLE2 + BINPERSID
        + STOP,
        "persistent id str": P2 + U("os.system") + BINPERSID + STOP,
        "torch.load global": P2 + G("torch", "load") + STOP,
        "ember module global": P2 + G("ember.serialization", "_Pickler") + STOP,
        # BUILD on classes, functions, singletons: pickle.Unpickler would setattr on them
        "BUILD Size class": _build_on(G("torch", "Size")),
        "BUILD Size __repr__": _build_on(G("torch", "Size"), "__repr__", G("torch", "device")),
        "BUILD device class": _build_on(G("torch", "device"), "__str__"),
        "BUILD Tensor class": _build_on(G("torch", "Tensor"), "add"),
        "BUILD Parameter class": _build_on(G("torch.nn.parameter", "Parameter"), "__repr__"),
        "BUILD dtype float32": _build_on(G("torch", "float32"), "itemsize", I(99)),
        "BUILD dtype bfloat16 dict": _dict_build_on(G("torch", "bfloat16")),
        "BUILD storage type": _build_on(G("torch", "FloatStorage"), "dtype", G("torch", "int8")),
        "BUILD rebuild function": _build_on(G("torch._utils", "_rebuild_tensor_v2"),
                                            "__defaults__", EMPTY_TUPLE),
        "BUILD _get_layout": _build_on(G("torch.serialization", "_get_layout"), "__code__"),
        "BUILD OrderedDict class": _build_on(G("collections", "OrderedDict"), "__repr__"),
        "BUILD Counter class dict": _dict_build_on(G("collections", "Counter"), "most_common"),
        "BUILD codecs.encode": _build_on(G("_codecs", "encode"), "x"),
        "BUILD builtins.set": _build_on(G("builtins", "set"), "add"),
        "BUILD fresh Size": _build_on(G("torch", "Size") + EMPTY_TUPLE + TUPLE1 + REDUCE),
        "BUILD fresh device": _build_on(G("torch", "device") + U("cpu") + TUPLE1 + REDUCE,
                                        "type", U("cuda")),
        "BUILD fresh set": _build_on(G("builtins", "set") + EMPTY_TUPLE + REDUCE, "x"),
        # SETITEM(S) / APPEND(S) / ADDITEMS on what is not a dict / list / set
        "SETITEMS on Size class": P2 + G("torch", "Size") + MARK + U("numel") + U("x")
        + SETITEMS + STOP,
        "SETITEM on Tensor class": P2 + G("torch", "Tensor") + U("add") + U("x") + SETITEM
        + STOP,
        "SETITEMS on set": P2 + G("builtins", "set") + EMPTY_TUPLE + REDUCE + MARK + U("a")
        + U("b") + SETITEMS + STOP,
        "SETITEMS on tuple": P2 + EMPTY_TUPLE + MARK + I(0) + U("b") + SETITEMS + STOP,
        "APPENDS on set class": P2 + G("builtins", "set") + MARK + U("a") + APPENDS + STOP,
        "APPEND on dict": P2 + EMPTY_DICT + U("a") + APPEND + STOP,
        "APPENDS on Counter": P2 + G("collections", "Counter") + EMPTY_TUPLE + REDUCE + MARK
        + U("a") + APPENDS + STOP,
        "APPEND on OrderedDict class": P2 + G("collections", "OrderedDict") + U("x") + APPEND
        + STOP,
        "ADDITEMS on list": P4 + EMPTY_LIST + MARK + U("a") + ADDITEMS + STOP,
        # REDUCE on what is not an allowed callable
        "REDUCE on str": P2 + U("os.system") + EMPTY_TUPLE + REDUCE + STOP,
        "REDUCE on fresh OrderedDict": P2 + G("collections", "OrderedDict") + EMPTY_TUPLE
        + REDUCE + EMPTY_TUPLE + REDUCE + STOP,
        # _rebuild_from_type_v2(_get_layout, Size, ("torch.strided",), {"upper": "x"})
        "rebuild_from_type layout": P2 + G("torch._tensor", "_rebuild_from_type_v2") + MARK
        + G("torch.serialization", "_get_layout") + G("torch", "Size") + U("torch.strided")
        + TUPLE1 + EMPTY_DICT + U("upper") + U("x") + SETITEM + TUPLE + REDUCE + STOP,
    }


CASE_NAMES = sorted(_cases("/m"))


# ------------------------------------------------------------------ harness

def _zip_checkpoint(pkl):
    """A valid zip checkpoint (ember's writer) whose data.pkl is `pkl`."""
    buf = io.BytesIO()
    S._write_zip(buf, [("archive/data.pkl", pkl), ("archive/data/0", b"\0" * 16),
                       ("archive/version", b"3\n"), ("archive/byteorder", b"little")])
    return buf.getvalue()


def _ember_objects():
    """Every module, class, function and dtype of ember (and what the allowlist exposes),
    for the before/after snapshot. Other instances (the default RNG Generator, reseeded
    by conftest before each test) legitimately change between tests."""
    seen, out = set(), []
    mods = [m for n, m in list(sys.modules.items()) if n == "ember" or n.startswith("ember.")]
    for mod in mods:
        out.append(mod)
        for v in list(vars(mod).values()):
            if id(v) not in seen and isinstance(v, (type, types.FunctionType, ember.dtype)):
                seen.add(id(v))
                out.append(v)
    out += [collections.OrderedDict, collections.Counter, set, bytearray, complex,
            *S._allowed().values()]
    return out


def _state(obj):
    d = getattr(obj, "__dict__", None)
    state = {k: id(v) for k, v in d.items()} if isinstance(d, (dict, types.MappingProxyType)) \
        else {}
    for k in getattr(type(obj), "__slots__", ()):
        state["slot:" + k] = id(getattr(obj, k, None))
    if isinstance(obj, types.FunctionType):
        state.update(code=id(obj.__code__), defaults=id(obj.__defaults__),
                     kwdefaults=id(obj.__kwdefaults__))
    return state


def _snapshot():
    return {id(o): (o, _state(o)) for o in _ember_objects()}


def _changed(before):
    return [repr(o)[:80] for o, st in before.values() if _state(o) != st]


def _outcome(load, data, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(data)
    try:
        load(path)
    except Exception as e:                                       # noqa: BLE001
        return e
    return None


def _torch_load(path):
    return torch.load(path, weights_only=True)


def _ember_load(path):
    return ember.load(path, weights_only=True)


def _agree(e, t):
    """ember's exception type is torch's, or a subclass of torch's builtin type."""
    if e is None or t is None:
        return e is None and t is None
    return type(e).__name__ == type(t).__name__ or (
        type(t).__module__ in ("builtins", "_pickle", "pickle") and isinstance(e, type(t)))


@pytest.fixture(scope="module", autouse=True)
def _ext_code():
    """EXT1/2/4 cases name a real extension code (os.system), so a plain pickle.load of
    those bytes would run it."""
    copyreg.add_extension("os", "system", EXT_CODE)
    yield
    copyreg.remove_extension("os", "system", EXT_CODE)


@pytest.fixture(scope="module")
def _baseline(tmp_path_factory):
    """One ordinary load first (lazy caches such as the allowlist fill), then one snapshot
    of ember's objects that every hostile load is checked against."""
    p = tmp_path_factory.mktemp("warm") / "ok.pt"
    ember.save({"x": ember.ones(2), "od": collections.OrderedDict(a=1)}, p)
    ember.load(p)
    return _snapshot()


@pytest.mark.parametrize("container", ["zip", "raw"])
@pytest.mark.parametrize("case", CASE_NAMES)
def test_hostile_pickle_refused(tmp_path, case, container, _baseline):
    marker = tmp_path / "pwned"
    pkl = _cases(marker)[case]
    data = _zip_checkpoint(pkl) if container == "zip" else pkl
    e = _outcome(_ember_load, data, tmp_path, "e.pt")
    assert not marker.exists(), "the hostile pickle ran code"
    assert _changed(_baseline) == [], "the hostile pickle changed ember's objects"
    t = _outcome(_torch_load, data, tmp_path, "t.pt")
    assert not marker.exists()
    assert e is not None, "ember loaded a file that weights_only must refuse"
    assert _agree(e, t), f"ember raised {type(e).__name__}: {e}; torch {type(t).__name__}: {t}"
    if isinstance(t, pickle.UnpicklingError):
        assert str(e).startswith("Weights only load failed"), str(e)
    assert "e.pt" in str(e) or not isinstance(e, (RuntimeError, pickle.UnpicklingError))


GLOBAL_CASES = ["os.system", "posix.system", "nt.system", "sys.modules", "builtins.exec",
                "__builtin__.eval", "builtins.getattr", "subprocess.call", "subprocess.Popen",
                "copyreg._reconstructor", "torch.load global", "ember module global",
                "INST os.system", "OBJ os.system", "EXT1", "NEWOBJ_EX Size",
                "SETITEMS on set", "APPEND on dict", "persistent id module"]


@pytest.mark.parametrize("case", GLOBAL_CASES)
def test_refusal_message_is_torchs(tmp_path, case, _baseline):
    """The whole message is PyTorch's ("Weights only load failed..." and the
    WeightsUnpickler error line), then ember names the file."""
    data = _zip_checkpoint(_cases(tmp_path / "m")[case])
    e = _outcome(_ember_load, data, tmp_path, "e.pt")
    t = _outcome(_torch_load, data, tmp_path, "t.pt")
    assert isinstance(e, pickle.UnpicklingError) and isinstance(t, pickle.UnpicklingError)
    assert str(e) == f"{t}\n(ember.load: {str(tmp_path / 'e.pt')!r})"


@pytest.mark.parametrize("opcode", [b"\x8d", b"\x8e", b"\x96"])   # BINUNICODE8/BINBYTES8/BYTEARRAY8
@pytest.mark.parametrize("container", ["zip", "raw"])
def test_huge_length_fields_allocate_nothing(tmp_path, opcode, container):
    """A length field claiming 2**62 bytes ends in EOFError at the end of the data, without
    asking for 2**62 bytes of memory (torch has no such opcodes: UnpicklingError)."""
    pkl = b"\x80\x04" + opcode + struct.pack("<Q", 2 ** 62) + b"abc" + STOP
    data = _zip_checkpoint(pkl) if container == "zip" else pkl
    e = _outcome(_ember_load, data, tmp_path, "e.pt")
    assert isinstance(e, EOFError) and "truncated" in str(e), repr(e)
    assert isinstance(_outcome(_torch_load, data, tmp_path, "t.pt"), pickle.UnpicklingError)


def test_snapshot_sees_tampering(_baseline):
    """The before/after check can fail: it notices exactly what the old unpickler's BUILD
    did (a class attribute, a dtype slot, a function's defaults)."""
    fn = S._rebuild_tensor_v2
    saved = (ember.float32.itemsize, fn.__defaults__)
    ember.Size.numel2 = "pwned"
    try:
        ember.float32.itemsize = 99
        fn.__defaults__ = (1,)
        changed = _changed(_baseline)
    finally:
        del ember.Size.numel2
        ember.float32.itemsize, fn.__defaults__ = saved
    assert len(changed) == 3, changed
    assert _changed(_baseline) == []


def test_hostile_cases_are_live(tmp_path):
    """The cases are real attacks: plain pickle runs them (a few, in one child process)."""
    names = ("os.system", "builtins.exec", "INST os.system", "OBJ os.system",
             "STACK_GLOBAL exec", "subprocess.call", "EXT1")
    markers = [tmp_path / f"m{i}" for i in range(len(names))]
    payload = [_cases(m)[n].hex() for m, n in zip(markers, names)]
    code = ("import copyreg, json, pickle, sys\n"
            f"copyreg.add_extension('os', 'system', {EXT_CODE})\n"
            "for h in json.loads(sys.stdin.read()):\n"
            "    try:\n"
            "        pickle.loads(bytes.fromhex(h))\n"
            "    except Exception:\n"
            "        pass\n")
    import json
    subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), text=True,
                   check=True, timeout=60, capture_output=True)
    time.sleep(0.2)                                     # subprocess.call/Popen children
    assert [m.exists() for m in markers] == [True] * len(names)


def test_build_tampering_blocked_where_pickle_would_not():
    """The old unpickler (pickle.Unpickler) let BUILD setattr on ember.Size: this is the
    exploit, run against plain pickle with torch names mapped to ember, to show what is
    being guarded against."""
    class Mapped(pickle.Unpickler):
        def find_class(self, module, name):
            return {"torch.Size": type("Size", (tuple,), {})}.get(f"{module}.{name}") or \
                super().find_class(module, name)
    cls = Mapped(io.BytesIO(_cases("/m")["BUILD Size class"])).load()
    assert cls.numel == "pwned"                 # plain pickle: the class was modified
    assert ember.Size([2, 3]).numel() == 6      # ember's real Size never was


def test_allowed_build_and_setitems_still_work(tmp_path):
    """What PyTorch allows stays allowed: OrderedDict._metadata through BUILD, dict
    SETITEMS, list APPENDS, set via builtins.set, Counter."""
    sd = collections.OrderedDict(w=ember.ones(2))
    sd._metadata = {"": {"version": 1}}
    obj = {"sd": sd, "l": [1, 2, 3], "s": {1, 2}, "c": collections.Counter("aab")}
    ember.save(obj, tmp_path / "ok.pt")
    for load in (lambda p: ember.load(p), lambda p: torch.load(p, weights_only=True)):
        out = load(tmp_path / "ok.pt")
        assert out["sd"]._metadata == {"": {"version": 1}}
        assert out["l"] == [1, 2, 3] and out["s"] == {1, 2} and out["c"]["a"] == 2


def test_safe_globals_build_on_user_class(tmp_path):
    """A user-allowlisted class: NEWOBJ + BUILD set state on the fresh instance only."""
    pkl = (P2 + G(__name__, "Point") + EMPTY_TUPLE + NEWOBJ + EMPTY_DICT + U("x") + I(3)
           + SETITEM + BUILD + STOP)
    (tmp_path / "p.pt").write_bytes(_zip_checkpoint(pkl))
    with pytest.raises(pickle.UnpicklingError, match="Point"):
        ember.load(tmp_path / "p.pt")
    with S.safe_globals([Point]):
        p = ember.load(tmp_path / "p.pt")
    assert type(p) is Point and p.x == 3 and "x" not in Point.__dict__


class Point:
    pass


# ------------------------------------------------------------ killed saves, temp files

_WRITER = """
import sys, numpy as np, ember
x = ember.from_numpy(np.full(int(sys.argv[2]), float(sys.argv[3]), np.float32))
ember.save({"x": x}, sys.argv[1])
"""


def _temps(folder, name):
    pat = _atomic_file.temp_pattern(name)
    return sorted(n for n in os.listdir(folder) if pat.match(n))


def _check_target(path, value):
    """The target is the previous complete checkpoint, never a truncated one."""
    x = ember.load(path)["x"]
    assert x.shape == (1000,) and float(x[0]) == value


def test_killed_saves_leave_at_most_one_temp(tmp_path):
    path = tmp_path / "big.pt"
    ember.save({"x": ember.full((1000,), 1.0)}, path)
    numel = 50_000_000                      # 200 MB of float32
    kills = 0
    t0 = time.monotonic()
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(numel), "2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and proc.poll() is None:
                mine = [n for n in _temps(tmp_path, path) if f".{proc.pid}." in n]
                if mine and os.path.getsize(tmp_path / mine[0]) > 0:
                    break
                time.sleep(0.002)
            if proc.poll() is not None:
                pytest.skip("the 200 MB save finished before it could be killed")
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait(timeout=10)
        kills += 1
        left = _temps(tmp_path, path)
        assert len(left) <= 1, left             # the previous killed save's temp is gone
        assert os.path.getsize(tmp_path / left[0]) < numel * 4      # really cut mid-write
        _check_target(path, 1.0)
    ember.save({"x": ember.full((1000,), 3.0)}, path)
    assert _temps(tmp_path, path) == []
    _check_target(path, 3.0)
    assert kills == 3 and time.monotonic() - t0 < 30


_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(30)
"""


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_live_writers_temps_are_kept(tmp_path):
    pytest.importorskip("fcntl")
    path = tmp_path / "ckpt.pt"
    dead = _dead_pid()
    stale = tmp_path / f".ckpt.pt.{dead}.abcd1234.tmp"
    mine = tmp_path / f".ckpt.pt.{os.getpid()}.abcd1234.tmp"        # this process: live
    locked = tmp_path / f".ckpt.pt.{dead}.lockedxx.tmp"      # dead pid, lock held elsewhere
    others = [tmp_path / ".ckpt.pt.x.tmp", tmp_path / f".other.pt.{dead}.abcd1234.tmp",
              tmp_path / f"ckpt.pt.{dead}.abcd1234.tmp", tmp_path / f".ckpt.pt.{dead}.tmp"]
    for p in [stale, mine, *others]:
        p.write_bytes(b"partial")
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(locked)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        live = tmp_path / f".ckpt.pt.{holder.pid}.livexxxx.tmp"    # a live writer's pid
        live.write_bytes(b"partial")
        ember.save({"x": ember.ones(2)}, path)
        assert not stale.exists()
        for p in [mine, locked, live, *others]:
            assert p.exists(), p.name
    finally:
        holder.kill()
        holder.wait(timeout=10)
    ember.save({"x": ember.ones(2)}, path)          # the holder is gone: its file is stale
    assert not locked.exists() and not live.exists() and mine.exists()
    np.testing.assert_array_equal(ember.load(path)["x"].numpy(), np.ones(2, np.float32))
