# The README's commands. Everything installs into .venv so a fresh clone works.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench lint setup clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test,examples,tiny]'
	# torchaudio's pure-Python code is the oracle of tests/audio: its C extension does not
	# load with torch 2.13, so it goes in without deps or .so files, outside site-packages
	$(VPY) -m pip install -q --no-deps --target $(VENV)/torchaudio-oracle torchaudio==2.11.0
	rm -f $(VENV)/torchaudio-oracle/torchaudio/lib/*.so
	touch $(STAMP)

setup: $(STAMP)

# one BLAS thread per test worker: two xdist workers already use both cores, and
# oversubscribed OpenBLAS threads slow small matmuls by 100x or more
test: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(VPY) -m pytest -n 2 tests

demo: $(STAMP)
	$(VPY) examples/digits_cnn.py --checkpoint $(VENV)/digits_cnn.pt

bench: $(STAMP)
	$(VPY) benchmarks/run.py
	$(VPY) benchmarks/eager_models.py
	$(VPY) benchmarks/compile.py
	$(VPY) benchmarks/attention.py
	$(VPY) benchmarks/sparse.py
	$(VPY) benchmarks/quantize_dynamic.py
	$(VPY) benchmarks/quantization.py
	$(VPY) benchmarks/quantization_accuracy.py

lint: $(STAMP)
	$(VPY) -m pip install -q ruff
	$(VPY) -m ruff check ember tests benchmarks examples scripts

clean:
	rm -rf $(VENV)
