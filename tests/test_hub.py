"""ember.hub: hubconf entrypoints from a local dir and from the hub cache, cached weight
downloads (file:// URLs stand in for the network), clear errors when unreachable."""
import hashlib
import os
import subprocess
import sys
import textwrap
import urllib.error

import numpy as np
import pytest

import ember
import ember.hub as hub

HUBCONF = textwrap.dedent('''
    import ember as torch
    dependencies = ["numpy"]

    def tiny_linear(in_features=2, out_features=3, *, bias=True):
        """A tiny Linear model."""
        torch.manual_seed(0)
        return torch.nn.Linear(in_features, out_features, bias=bias)

    def _private():
        return 1

    not_callable = 3
''')


@pytest.fixture
def repo(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(HUBCONF)
    return d


def test_load_local(repo):
    m = hub.load(str(repo), "tiny_linear", 4, out_features=5, source="local", bias=False)
    assert isinstance(m, ember.nn.Linear)
    assert tuple(m.weight.shape) == (5, 4) and m.bias is None
    with pytest.raises(RuntimeError, match="Cannot find callable not_callable in hubconf"):
        hub.load(str(repo), "not_callable", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        hub.load(str(repo), "tiny_linear", source="svn")


def test_missing_dependencies(repo):
    (repo / "hubconf.py").write_text(HUBCONF.replace('["numpy"]',
                                                     '["numpy", "no_such_pkg_xyz"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_xyz"):
        hub.load(str(repo), "tiny_linear", source="local")


def test_github_repo_from_cache_list_help(tmp_path, repo, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    hub.set_dir(str(tmp_path / "hubcache"))
    cached = tmp_path / "hubcache" / "someone_models_main"
    cached.parent.mkdir()
    os.rename(repo, cached)
    assert hub.list("someone/models", verbose=False) == ["tiny_linear"]
    assert hub.help("someone/models", "tiny_linear") == "A tiny Linear model."
    m = hub.load("someone/models", "tiny_linear", verbose=False)
    assert tuple(m.weight.shape) == (3, 2)
    with pytest.raises(ValueError, match="Invalid input: github should be"):
        hub.list("no-slash")


def test_get_dir_follows_torch_home(monkeypatch, tmp_path):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    hub.set_dir(str(tmp_path / "mine"))
    assert hub.get_dir() == str(tmp_path / "mine")


def test_load_state_dict_from_url_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    hub.set_dir(str(tmp_path / "hub"))
    sd = {"w": ember.arange(6.0).reshape(2, 3)}
    src = tmp_path / "weights.pt"
    ember.save(sd, str(src))
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    named = tmp_path / f"weights-{digest[:8]}.pt"
    os.rename(src, named)
    url = named.as_uri()
    got = hub.load_state_dict_from_url(url, check_hash=True, progress=False)
    np.testing.assert_array_equal(got["w"].numpy(), sd["w"].numpy())
    cached = tmp_path / "hub" / "checkpoints" / named.name
    assert cached.exists()
    os.remove(named)      # second call is served from the cache
    got = hub.load_state_dict_from_url(url, progress=False)
    np.testing.assert_array_equal(got["w"].numpy(), sd["w"].numpy())
    bad = tmp_path / "other-deadbeef.pt"
    ember.save(sd, str(bad))
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert not (tmp_path / "hub" / "checkpoints" / bad.name).exists()


def test_unreachable_url_is_a_clear_error(tmp_path):
    with pytest.raises(urllib.error.URLError, match="ember.hub: cannot download"):
        hub.download_url_to_file("http://127.0.0.1:9/x.pt", str(tmp_path / "x.pt"),
                                 progress=False)
    assert not os.listdir(tmp_path)


def test_hubconf_importing_torch_under_ember_run(tmp_path, repo):
    (repo / "hubconf.py").write_text(HUBCONF.replace("import ember as torch", "import torch"))
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(f'''
        import torch
        m = torch.hub.load({str(repo)!r}, "tiny_linear", source="local")
        print(type(m).__module__.split(".")[0], tuple(m.weight.shape))
    '''))
    out = subprocess.run([sys.executable, "-m", "ember", "run", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ember (3, 2)"
