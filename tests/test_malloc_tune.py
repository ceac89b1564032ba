"""ember._malloc: importing ember keeps freed temporaries in the process (glibc), so an
eager step does not page-fault its multi-megabyte temporaries in again every time."""
import subprocess
import sys

import pytest

CHILD = r"""
import resource, numpy as np, ember, ember._malloc as m
x = np.ones(1 << 20, np.float32)
def step():                           # a step's worth of 4 MB temporaries, then freed
    ys = [x * k for k in range(8)]
    del ys
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(m.TUNED[0], resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _run(env_value):
    env = {"EMBER_MALLOC_TUNE": env_value, "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout.split()
    return out[0] == "True", int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt")
def test_freed_temporaries_stay_mapped():
    tuned, faults = _run("1")
    if not tuned:
        pytest.skip("not glibc")
    untuned, faults_default = _run("0")
    assert not untuned
    # glibc's defaults return the freed heap top to the OS and fault it in again next
    # step (1024 pages per 4 MB temporary); tuned, the heap reuses what the last step freed
    assert faults < 500 < faults_default
