"""ember._logging: artifacts on/off, component levels, the EMBER_LOGS/TORCH_LOGS grammar.

Every case runs in a fresh interpreter: the settings are read at import and live in the
process-wide `logging` tree, so only a new process shows what a user's run would print.
"""
import logging
import os
import re
import subprocess
import sys
import textwrap

import pytest

# a child that emits one line on each kind of logger, then prints nothing else
EMIT = textwrap.dedent("""
    import logging, sys
    import ember._logging as L
    guards = L.getArtifactLogger("ember._dynamo.guards", "guards")
    breaks = L.getArtifactLogger("ember._dynamo.symbolic_convert", "graph_breaks")
    recompiles = L.getArtifactLogger("ember._dynamo.guards", "recompiles")
    code = L.getArtifactLogger("ember._inductor.graph", "output_code")
    dyn = logging.getLogger("ember._dynamo.eval_frame")
    nn_log = logging.getLogger("ember.nn.modules.module")
    exec(sys.argv[1] if len(sys.argv) > 1 else "")
    guards.debug("guards-line")
    breaks.debug("breaks-line")
    recompiles.debug("recompiles-line")
    code.debug("code-line")
    dyn.debug("dynamo-debug")
    dyn.info("dynamo-info")
    dyn.warning("dynamo-warning")
    dyn.error("dynamo-error")
    nn_log.debug("nn-debug")
""")

ALL_LINES = ["guards-line", "breaks-line", "recompiles-line", "code-line", "dynamo-debug",
             "dynamo-info", "dynamo-warning", "dynamo-error", "nn-debug"]


def run(code, env=None, arg=None, check=True):
    """(returncode, stderr) of `python -c code [arg]` with EMBER_LOGS/TORCH_LOGS unset
    unless `env` sets them."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("EMBER_LOGS", "TORCH_LOGS"))}
    full.update(env or {})
    cmd = [sys.executable, "-c", code] + ([arg] if arg is not None else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=60)
    if check:
        assert out.returncode == 0, out.stderr
    return out.returncode, out.stderr


def printed(env=None, arg=None):
    """Which of ALL_LINES the EMIT child printed."""
    _, err = run(EMIT, env, arg)
    return {line for line in ALL_LINES if re.search(rf"\b{line}\b", err)}


@pytest.mark.parametrize("setting, expected", [
    ("", {"dynamo-warning", "dynamo-error"}),
    ("guards", {"guards-line", "dynamo-warning", "dynamo-error"}),
    ("graph_breaks,recompiles", {"breaks-line", "recompiles-line", "dynamo-warning",
                                 "dynamo-error"}),
    ("output_code", {"code-line", "dynamo-warning", "dynamo-error"}),
    ("dynamo", {"dynamo-info", "dynamo-warning", "dynamo-error"}),
    # DEBUG turns on the component's artifacts, except those off by default (output_code)
    ("+dynamo", {"guards-line", "breaks-line", "recompiles-line", "dynamo-debug",
                 "dynamo-info", "dynamo-warning", "dynamo-error"}),
    ("-dynamo", {"dynamo-error"}),
    ("+dynamo, output_code", {"guards-line", "breaks-line", "recompiles-line", "code-line",
                              "dynamo-debug", "dynamo-info", "dynamo-warning", "dynamo-error"}),
    # "all" is every registered log; module names work, torch.x meaning ember.x
    ("+all", set(ALL_LINES) - {"code-line"}),
    ("+torch.nn", {"nn-debug", "dynamo-warning", "dynamo-error"}),
    ("+ember.nn", {"nn-debug", "dynamo-warning", "dynamo-error"}),
])
def test_env_grammar(setting, expected):
    assert printed({"EMBER_LOGS": setting}) == expected


def test_torch_logs_same_grammar():
    assert printed({"TORCH_LOGS": "+dynamo,output_code"}) == set(ALL_LINES) - {"nn-debug"}
    assert printed({"TORCH_LOGS": "-dynamo"}) == {"dynamo-error"}


def test_ember_logs_wins_over_torch_logs():
    assert printed({"EMBER_LOGS": "guards", "TORCH_LOGS": "graph_breaks"}) == {
        "guards-line", "dynamo-warning", "dynamo-error"}


@pytest.mark.parametrize("setting", ["bogus", "dynamo guards", "+dynamo,,guards",
                                     "no_such.module", "+graph_breaks,notalog"])
def test_env_unknown_names_raise_value_error(setting):
    rc, err = run("import ember._logging", {"EMBER_LOGS": setting}, check=False)
    assert rc != 0
    assert "ValueError" in err and f"Invalid log settings: {setting}" in err
    assert 'try EMBER_LOGS="help"' in err
    valid = err.split("Valid settings:")[1]
    for name in ("all", "dynamo", "graph_breaks", "recompiles", "guards", "output_code"):
        assert re.search(rf"\b{name}\b", valid)


def test_env_help_lists_names():
    rc, err = run("import ember._logging", {"TORCH_LOGS": "help"}, check=False)
    assert rc != 0 and "ValueError" in err
    assert "graph_breaks" in err and "recompiles" in err and "+help" in err
    assert "trace_bytecode" not in err            # not visible: only in +help
    rc, err = run("import ember._logging", {"TORCH_LOGS": "+help"}, check=False)
    assert "trace_bytecode" in err


def test_set_logs_components_and_artifacts():
    assert printed(arg="L.set_logs(graph_breaks=True)") == {
        "breaks-line", "dynamo-warning", "dynamo-error"}
    assert printed(arg="L.set_logs(dynamo=logging.DEBUG, output_code=True)") == (
        set(ALL_LINES) - {"nn-debug"})
    assert printed(arg="L.set_logs(dynamo=logging.ERROR)") == {"dynamo-error"}
    assert printed(arg="L.set_logs(all=logging.INFO)") == {
        "dynamo-info", "dynamo-warning", "dynamo-error"}
    assert printed(arg="L.set_logs(modules={'ember.nn': logging.DEBUG, 'guards': True})") == {
        "nn-debug", "guards-line", "dynamo-warning", "dynamo-error"}
    # each call replaces the previous settings
    assert printed(arg="L.set_logs(guards=True); L.set_logs(recompiles=True)") == {
        "recompiles-line", "dynamo-warning", "dynamo-error"}
    assert printed(arg="L.set_logs(guards=True); L.set_logs()") == {
        "dynamo-warning", "dynamo-error"}


def test_set_logs_is_ignored_when_env_is_set():
    _, err = run(EMIT, {"EMBER_LOGS": "recompiles"}, "L.set_logs(guards=True)")
    assert "Using EMBER_LOGS environment variable for log settings, ignoring call to " \
           "set_logs" in err
    assert "recompiles-line" in err and "guards-line" not in err


def test_each_artifact_turns_on_and_off():
    """Every registered artifact prints when turned on by name, and only then."""
    code = textwrap.dedent("""
        import io, logging, sys
        import ember._logging as L
        from ember._logging._internal import log_registry
        names = sorted(log_registry.artifact_names)
        logs = {n: L.getArtifactLogger("ember._dynamo.output_graph", n) for n in names}

        def emitted(**settings):
            sys.stderr = buf = io.StringIO()
            L.set_logs(**settings)
            for n, lg in logs.items():
                lg.debug("<%s>", n)
            sys.stderr = sys.__stderr__
            return {n for n in names if f"[__{n}] <{n}>" in buf.getvalue()}

        for n in names:
            got = emitted(modules={n: True})
            assert got == {n}, (n, got)
            assert emitted(modules={n: False}) == set(), n
        # component at DEBUG: every artifact but the off-by-default ones
        got = emitted(dynamo=logging.DEBUG)
        assert got == set(names) - log_registry.off_by_default_artifact_names, got
        assert "output_code" not in got and "graph_breaks" in got
        print(len(names))
    """)
    _, err = run(code)
    assert err == ""


def test_set_logs_bad_arguments():
    code = textwrap.dedent("""
        import logging
        import ember._logging as L
        for kwargs, text in [
                (dict(graph_breaks=1), "Expected bool to enable artifact graph_breaks"),
                (dict(dynamo=7), "Unrecognized log level for log dynamo: 7"),
                (dict(modules={"not_a_log": True}),
                 "Unrecognized log or artifact name passed to set_logs: not_a_log")]:
            try:
                L.set_logs(**kwargs)
            except ValueError as e:
                assert text in str(e), (text, str(e))
            else:
                raise AssertionError(kwargs)
        try:
            L.set_logs(no_such_artifact=True)
        except TypeError:
            pass
        else:
            raise AssertionError("unknown keyword accepted")
        try:
            L.getArtifactLogger(__name__, "no_such_artifact")
        except ValueError as e:
            assert "'no_such_artifact' not registered" in str(e)
        else:
            raise AssertionError("unknown artifact accepted")
    """)
    run(code)


GLOG = re.compile(r"^V\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ \S+:\d+\] \[__guards\] (.*)$")


def test_output_format_glog_style_every_line_prefixed():
    code = EMIT.replace('guards.debug("guards-line")', 'guards.debug("first\\nsecond")')
    _, err = run(code, {"EMBER_LOGS": "guards"})
    lines = [ln for ln in err.splitlines() if "[__guards]" in ln]
    assert [GLOG.match(ln).group(1) for ln in lines] == ["first", "second"]
    assert re.search(r"^W\d{4} .* \S+:\d+\] dynamo-warning$", err, re.M)
    assert re.search(r"^E\d{4} .* \S+:\d+\] dynamo-error$", err, re.M)


def test_file_paths_relative_to_package_root():
    """Files show as ember/_dynamo/x.py even when ember's root is not on sys.path (an
    editable install's import hook), as PyTorch's show torch/_dynamo/x.py."""
    import ember._dynamo.config as cfg
    from ember._logging._internal import _make_module_path_relative
    assert _make_module_path_relative(cfg.__file__, ()) == os.path.join(
        "ember", "_dynamo", "config.py")
    assert _make_module_path_relative(__file__, ()) == os.path.realpath(__file__)


def test_format_and_out_env(tmp_path):
    out = tmp_path / "logs.txt"
    _, err = run(EMIT, {"EMBER_LOGS": "guards", "EMBER_LOGS_FORMAT": "short",
                        "TORCH_LOGS_OUT": str(out)})
    assert "DEBUG:ember._dynamo.guards.__guards:guards-line" in err
    assert "DEBUG:ember._dynamo.guards.__guards:guards-line" in out.read_text()
    _, err = run(EMIT, {"TORCH_LOGS": "guards", "TORCH_LOGS_FORMAT": "%(levelname)s|%(message)s"})
    assert "DEBUG|guards-line" in err


def test_output_follows_redirected_stderr():
    """Lines go to sys.stderr as it is at the time of the call (capsys, redirect_stderr)."""
    code = textwrap.dedent("""
        import contextlib, io
        import ember._logging as L
        guards = L.getArtifactLogger("ember._dynamo.guards", "guards")
        buf = io.StringIO()
        with contextlib.redirect_stderr(buf):
            guards.debug("caught")
        guards.debug("not-caught")
        print(buf.getvalue().strip())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, EMBER_LOGS="guards"), timeout=60)
    assert out.stdout.strip().endswith("[__guards] caught"), out
    assert "not-caught" in out.stderr and "caught" not in out.stdout.replace(
        "[__guards] caught", "")


def test_import_ember_does_not_import_logging_machinery():
    _, err = run("import sys, ember; assert 'ember._logging' not in sys.modules, 'eager'; "
                 "import ember._logging")
    assert err == ""


def test_names_are_pytorchs():
    """Every name ember accepts is one PyTorch accepts (and means the same component)."""
    torch_logging = pytest.importorskip("torch._logging._internal")
    from ember._logging._internal import log_registry
    theirs = torch_logging.log_registry
    assert log_registry.artifact_names <= theirs.artifact_names
    assert set(log_registry.log_alias_to_log_qnames) <= set(theirs.log_alias_to_log_qnames)
    assert log_registry.visible_artifacts <= theirs.visible_artifacts
    assert theirs.visible_artifacts - log_registry.visible_artifacts <= {
        "custom_format_test_artifact"}
    off = {n for n in log_registry.artifact_names if log_registry.is_off_by_default(n)}
    assert off == {n for n in log_registry.artifact_names if theirs.is_off_by_default(n)}
    assert logging.getLevelName(logging.DEBUG) == "DEBUG"
