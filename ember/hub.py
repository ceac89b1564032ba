"""torch.hub: load models from a repo's hubconf.py (a local directory, or a GitHub repo
already in the hub cache / downloadable), and cached downloads of weights.

The cache directory is torch's (`$TORCH_HOME/hub`, default `$XDG_CACHE_HOME/torch/hub`,
default `~/.cache/torch/hub`), so weights PyTorch already downloaded are reused.
A hubconf that does `import torch` gets ember when the program runs under `ember run`.
"""
import contextlib
import errno
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.parse
import warnings
import zipfile

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

MASTER_BRANCH = "master"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TIMEOUT_S = 30

_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    """The hub cache directory: set_dir()'s, else $TORCH_HOME/hub."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead")
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Sets the hub cache directory for this process."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _check_dependencies(m):
    dependencies = getattr(m, VAR_DEPENDENCY, None)
    if dependencies is not None:
        missing = [pkg for pkg in dependencies if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(m)
    func = getattr(m, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _parse_repo_info(github):
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    if "/" not in repo_info:
        raise ValueError(f'Invalid input: github should be "repo_owner/repo_name[:ref]", '
                         f'got {github}')
    repo_owner, repo_name = repo_info.split("/")
    return repo_owner, repo_name, ref


def _download(url, dst_file, hash_prefix=None, progress=True):
    import urllib.request   # here, not at import time: it pulls in http, email and ssl
    req = urllib.request.Request(url, headers={"User-Agent": "ember.hub"})
    try:
        u = urllib.request.urlopen(req, timeout=_TIMEOUT_S)
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise urllib.error.URLError(
            f"ember.hub: cannot download {url} ({reason}); check the network, or put the "
            f"file in the hub cache {get_dir()} yourself") from e
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    with u:
        meta = u.info()
        size = meta.get_all("Content-Length")
        total = int(size[0]) if size else None
        done = 0
        while True:
            buffer = u.read(READ_DATA_CHUNK)
            if not buffer:
                break
            dst_file.write(buffer)
            if sha256 is not None:
                sha256.update(buffer)
            done += len(buffer)
            if progress and total:
                sys.stderr.write(f"\r{100 * done // total}% of {total} bytes")
    if progress and total:
        sys.stderr.write("\n")
    if sha256 is not None:
        digest = sha256.hexdigest()
        if digest[:len(hash_prefix)] != hash_prefix:
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads `url` to `dst` atomically (temp file, then rename), checking a sha256 prefix."""
    dst = os.path.expanduser(dst)
    dst_dir = os.path.dirname(os.path.abspath(dst))
    os.makedirs(dst_dir, exist_ok=True)
    f = tempfile.NamedTemporaryFile(delete=False, dir=dst_dir, suffix=".partial")
    try:
        with f:
            _download(url, f, hash_prefix=hash_prefix, progress=progress)
        os.replace(f.name, dst)
    finally:
        if os.path.exists(f.name):
            os.remove(f.name)


def _get_cache_or_reload(github, force_reload, verbose=True):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    refs = [ref] if ref is not None else ["main", MASTER_BRANCH]
    for r in refs:
        repo_dir = os.path.join(hub_dir, "_".join([repo_owner, repo_name,
                                                   r.replace("/", "_")]))
        if os.path.exists(repo_dir) and not force_reload:
            if verbose:
                sys.stderr.write(f"Using cache found in {repo_dir}\n")
            return repo_dir
    last_error = None
    for r in refs:
        normalized = r.replace("/", "_")
        repo_dir = os.path.join(hub_dir, "_".join([repo_owner, repo_name, normalized]))
        cached_file = os.path.join(hub_dir, normalized + ".zip")
        url = f"https://github.com/{repo_owner}/{repo_name}/zipball/{r}"
        try:
            download_url_to_file(url, cached_file, progress=False)
        except urllib.error.URLError as e:
            last_error = e
            continue
        with zipfile.ZipFile(cached_file) as cached_zipfile:
            extracted_repo_name = cached_zipfile.infolist()[0].filename
            extracted_repo = os.path.join(hub_dir, extracted_repo_name)
            shutil.rmtree(extracted_repo, ignore_errors=True)
            cached_zipfile.extractall(hub_dir)
        os.remove(cached_file)
        shutil.rmtree(repo_dir, ignore_errors=True)
        shutil.move(extracted_repo, repo_dir)
        return repo_dir
    raise last_error


def _repo_dir(repo_or_dir, source, force_reload, verbose):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        return _get_cache_or_reload(repo_or_dir, force_reload, verbose)
    return repo_or_dir


def _hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        hubconf_path = os.path.join(repo_dir, MODULE_HUBCONF)
        if not os.path.exists(hubconf_path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), hubconf_path)
        return _import_module(MODULE_HUBCONF, hubconf_path)


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):
    """Names of the entrypoints (public callables) a repo's hubconf.py exposes."""
    repo_dir = _repo_dir(github, "github", force_reload, verbose)
    hub_module = _hubconf(repo_dir)
    return [f for f in dir(hub_module)
            if callable(getattr(hub_module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):
    """The docstring of one hubconf entrypoint."""
    repo_dir = _repo_dir(github, "github", force_reload, True)
    hub_module = _hubconf(repo_dir)
    return _load_entry_from_hubconf(hub_module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Calls hubconf.<model>(*args, **kwargs) from a local dir (source='local') or a GitHub
    repo ('owner/name[:ref]', cached under get_dir())."""
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, verbose)
    return _load_local(repo_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        hubconf_path = os.path.join(hubconf_dir, MODULE_HUBCONF)
        hub_module = _import_module(MODULE_HUBCONF, hubconf_path)
        entry = _load_entry_from_hubconf(hub_module, model)
        return entry(*args, **kwargs)


def _is_legacy_zip_format(filename):
    if zipfile.is_zipfile(filename):
        infolist = zipfile.ZipFile(filename).infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """ember.load of `url`, downloaded once into <hub dir>/checkpoints (or model_dir)."""
    import ember
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead")
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        with zipfile.ZipFile(cached_file) as f:
            members = f.infolist()
            extracted_name = members[0].filename
            f.extractall(model_dir)
        cached_file = os.path.join(model_dir, extracted_name)
    return ember.load(cached_file, map_location=map_location, weights_only=weights_only)
