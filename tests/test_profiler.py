"""ember.profiler against torch.profiler: events, names, memory, schedule, exports."""
import json

import pytest

from oracle import torch
import ember
from ember.profiler import profile, record_function, schedule


def program(L):
    x = L.ones(100, 10, requires_grad=True)
    w = L.ones(10, 5, requires_grad=True)
    with L.profiler.record_function("forward"):
        y = (x.matmul(w) * 2).relu().sum()
    y.backward()
    return y


def run(L, **kw):
    with L.profiler.profile(**kw) as prof:
        program(L)
    return prof


def test_ops_and_backward_nodes_are_events():
    prof = run(ember, record_shapes=True)
    names = {e.key for e in prof.key_averages()}
    assert {"aten::matmul", "aten::mul", "aten::relu", "aten::sum", "forward"} <= names
    tnames = {e.key for e in run(torch).key_averages()}
    for node in ("MulBackward0", "SumBackward0", "ReluBackward0"):
        assert node in names and node in tnames
        assert f"autograd::engine::evaluate_function: {node}" in names
        assert f"autograd::engine::evaluate_function: {node}" in tnames


def test_times_nest_and_add_up():
    prof = run(ember)
    for e in prof.events():
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-6
        for c in e.cpu_children:
            assert e.start_us <= c.start_us and c.end_us <= e.end_us
    fwd = [e for e in prof.events() if e.name == "forward"][0]
    assert {c.name for c in fwd.cpu_children} >= {"aten::matmul", "aten::mul", "aten::relu"}
    total = prof.total_average()
    assert total.count == len(prof.events())


def test_memory_columns_count_output_bytes():
    prof = run(ember, profile_memory=True)
    first = {}
    for e in prof.events():
        first.setdefault(e.name, e)
    assert first["aten::matmul"].self_cpu_memory_usage == 100 * 5 * 4
    assert first["aten::sum"].cpu_memory_usage == 4
    table = prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10)
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                "CPU Mem", "Self CPU Mem", "# of Calls"):
        assert col in table
    assert "Self CPU time total:" in table


def test_input_shapes_and_grouping():
    prof = run(ember, record_shapes=True)
    rows = prof.key_averages(group_by_input_shape=True)
    mm = [e for e in rows if e.key == "aten::matmul" and e.input_shapes == [[100, 10], [10, 5]]]
    assert len(mm) == 1
    assert "Input Shapes" in rows.table(row_limit=5)


@pytest.mark.parametrize("sort_by", ["self_cpu_time_total", "cpu_time_total",
                                     "self_cpu_memory_usage", "cpu_memory_usage", "count"])
def test_table_sorting(sort_by):
    avgs = run(ember, profile_memory=True).key_averages()
    table = avgs.table(sort_by=sort_by, row_limit=3)
    vals = sorted((getattr(e, sort_by) for e in avgs), reverse=True)[:3]
    assert len(table.splitlines()) == 3 + 3 + 2
    assert vals == sorted(vals, reverse=True)


def test_bad_sort_key_raises_like_torch():
    with pytest.raises(AttributeError):
        run(torch).key_averages().table(sort_by="nope")
    with pytest.raises(AttributeError):
        run(ember).key_averages().table(sort_by="nope")


def test_top_level_events_only():
    avgs = run(ember).key_averages()
    table = avgs.table(top_level_events_only=True, row_limit=100)
    assert "forward" in table and "aten::relu" not in table


def test_record_function_decorator_and_nesting():
    @record_function("outer_fn")
    def f(x):
        with record_function("inner"):
            return x * 3
    with profile() as prof:
        f(ember.ones(3))
    ev = {e.name: e for e in prof.events()}
    assert ev["inner"].cpu_parent is ev["outer_fn"]
    assert ev["aten::mul"].cpu_parent is ev["inner"]


def test_stacks_and_export(tmp_path):
    prof = run(ember, with_stack=True)
    mm = [e for e in prof.events() if e.name == "aten::matmul"][0]
    assert any("test_profiler.py" in f for f in mm.stack)
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), "self_cpu_time_total")
    lines = path.read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any(line.split(" ")[0].endswith("aten::matmul") or ";aten::matmul " in line
               for line in lines)


def test_chrome_trace_schema_and_nesting(tmp_path):
    prof = run(ember, record_shapes=True, profile_memory=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    spans = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert spans and all({"name", "ts", "dur", "pid", "tid", "cat"} <= e.keys() for e in spans)
    fwd_ev = [e for e in prof.events() if e.name == "forward"][0]
    child_ids = {c.id for c in fwd_ev.cpu_children}
    fwd = [e for e in spans if e["args"]["External id"] == fwd_ev.id][0]
    inside = [e for e in spans if e["args"]["External id"] in child_ids]
    assert len(inside) == len(child_ids) >= 3
    for e in inside:
        assert fwd["ts"] <= e["ts"] and e["ts"] + e["dur"] <= fwd["ts"] + fwd["dur"] + 1e-3
    assert any(e.get("name") == "[memory]" for e in data["traceEvents"])


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0,
                                active=1, repeat=2), dict(wait=2, warmup=1, active=1,
                                                          repeat=1, skip_first=3)])
def test_schedule_matches_torch(kw):
    ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
    for step in range(15):
        assert ours(step).name == theirs(step).name


def test_schedule_windows_and_trace_handler(tmp_path):
    def calls(L):
        seen = []
        with L.profiler.profile(schedule=L.profiler.schedule(wait=1, warmup=1, active=2,
                                                              repeat=2),
                                on_trace_ready=lambda p: seen.append(p.step_num)) as prof:
            for _ in range(10):
                L.ones(3) * 2
                prof.step()
        return seen
    assert calls(ember) == calls(torch)
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=1),
                 on_trace_ready=ember.profiler.tensorboard_trace_handler(str(tmp_path))) as p:
        ember.ones(2) + 1
        p.step()
    files = list(tmp_path.glob("*.pt.trace.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["traceEvents"]


def test_legacy_autograd_profiler():
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        ember.ones(4, 4).matmul(ember.ones(4, 4))
    assert "aten::matmul" in prof.key_averages().table()
    assert prof.function_events


def test_with_flops_counts_matmul():
    with profile(with_flops=True) as prof:
        ember.ones(8, 16).matmul(ember.ones(16, 4))
    mm = [e for e in prof.events() if e.name == "aten::matmul"][0]
    assert mm.flops == 2 * 8 * 4 * 16
    assert "FLOPs" in prof.key_averages().table()


def test_no_mode_left_behind():
    from ember._dispatch import STATE
    run(ember)
    assert STATE.modes == [] and ember.profiler._state.current() is None


def test_forked_work_is_profiled():
    with profile() as prof:
        ember.jit.wait(ember.jit.fork(lambda: ember.ones(3) * 5))
    assert any(e.name == "aten::mul" for e in prof.events())


def test_allocated_and_freed_bytes_are_separate():
    x = ember.ones(1000)
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            y = x * 2          # allocates 4000
            z = y + 1          # allocates 4000
            del y              # frees 4000
    ev = {e.name: e for e in prof.events()}
    assert ev["block"].allocated_bytes == 8000 and ev["block"].freed_bytes == 4000
    assert ev["block"].cpu_memory_usage == 4000
    assert ev["aten::mul"].allocated_bytes == 4000 and ev["aten::mul"].freed_bytes == 0
    from ember._memory import _THREADED
    assert not _THREADED[0] or ember.jit._POOL.threads    # totals tracking switched off
    del z
