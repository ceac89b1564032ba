"""Module-level names PyTorch programs touch on a CPU build: torch.cuda, torch.backends,
thread settings — they answer as PyTorch's CPU build does."""
import pytest

from oracle import torch
import ember


def test_cuda_reports_no_device_like_a_cpu_build():
    assert ember.cuda.is_available() is torch.cuda.is_available() is False
    assert ember.cuda.device_count() == torch.cuda.device_count() == 0
    ember.cuda.manual_seed(0)
    ember.cuda.manual_seed_all(0)
    torch.cuda.manual_seed_all(0)
    for L in (ember, torch):
        with pytest.raises(AssertionError):
            L.cuda.current_device()
    ember.cuda.empty_cache()


def test_backend_flags_exist():
    # torch's flags are only read here: importing torch.testing._internal (the OpInfo
    # coverage test) freezes them for the rest of that xdist worker
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert isinstance(getattr(ember.backends.cudnn, name), bool)
        assert isinstance(getattr(torch.backends.cudnn, name), bool)
    ember.backends.cudnn.benchmark = False
    ember.backends.cudnn.deterministic = True
    assert ember.backends.mps.is_available() is torch.backends.mps.is_available() is False
    ember.backends.cudnn.deterministic = False


def test_thread_settings():
    n = ember.get_num_threads()
    assert n >= 1
    ember.set_num_threads(1)
    assert ember.get_num_threads() == 1
    ember.set_num_threads(n)
    with pytest.raises(RuntimeError):
        ember.set_num_threads(0)
    assert ember.get_num_interop_threads() >= 1


def test_device_amp_modules_are_attributes_after_import_ember():
    """torch.cpu.amp / torch.cuda.amp work after a plain `import torch` (loaded on first use)."""
    import subprocess
    import sys
    code = ("import ember; ember.cpu.amp.GradScaler; ember.cuda.amp.GradScaler; "
            "print(ember.cpu.amp.autocast.__module__, ember.cuda.amp.autocast.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["ember.cpu.amp.autocast_mode", "ember.cuda.amp.autocast_mode"]
