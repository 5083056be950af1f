"""The manifest set: parse and validate, keep last-good, path / http / git modes."""
from __future__ import annotations

import os

import pytest

from ccm.agent.config import ManifestSetConfig
from ccm.agent.manifest_set import SetError, SetLoader, parse_set

from .helpers import CondServer, commit, git, git_repo


def yaml_bytes(text: str) -> bytes:
    return text.encode()


def test_parse_good_set_with_relative_members():
    members = parse_set(b"manifests:\n  - {name: web, source: web/manifest.yaml}\n"
                        b"  - {name: db, source: 'https://h/db.tar.gz'}\n", "set.yaml", relative_base="/srv/set")
    assert [(m.name, m.source) for m in members] == [("web", "/srv/set/web/manifest.yaml"), ("db", "https://h/db.tar.gz")]


@pytest.mark.parametrize("text, needle", [
    ("manifests: [", "invalid YAML"),
    ("manifest: []", "manifest: unknown key"),
    ("manifests: {a: b}", "manifests: must be a list"),
    ("manifests: [{name: a, source: /a, extra: 1}]", "manifests[0].extra: unknown key"),
    ("manifests: [{name: a, source: /a}, {name: a, source: /b}]", "manifests[1].name: duplicate name 'a'"),
    ("manifests: [{source: /a}]", "manifests[0].name: must be a non-empty string"),
    ("manifests: [{name: a}]", "manifests[0].source: is required"),
    ("manifests: [{name: a, source: 'svn://x/y'}]", "manifests[0].source: unsupported manifest source"),
    ("manifests: [{name: a, source: rel.yaml}]", "manifests[0].source: a local manifest must be an absolute path"),
    ("- a", "must be a mapping"),
])
def test_parse_rejects(text, needle):
    with pytest.raises(SetError) as err:
        parse_set(text.encode(), "set.yaml")
    assert needle in str(err.value) and str(err.value).startswith("set.yaml")


def test_path_mode_keeps_last_good(tmp_path):
    path = tmp_path / "set.yaml"
    loader = SetLoader(ManifestSetConfig(source=str(path)), cache_dir=str(tmp_path / "c"), object_bytes=None)
    with pytest.raises(SetError, match="does not exist"):
        loader.load()
    assert loader.current is None and "does not exist" in loader.status()["last_error"]
    assert loader.status()["last_load"] is None
    path.write_text("manifests: [{name: a, source: /a.yaml}]\n")
    got, changed = loader.load()
    assert changed and [m.name for m in got.members] == ["a"]
    assert loader.status()["last_error"] is None and loader.status()["last_load"]
    _, changed = loader.load()
    assert not changed
    path.write_text("manifests: [{name: a, source: /a.yaml}, {name: a, source: /b.yaml}]\n")
    with pytest.raises(SetError, match="duplicate"):
        loader.load()
    assert [m.name for m in loader.current.members] == ["a"]   # last good kept
    assert "duplicate" in loader.status()["last_error"]


def test_http_mode_uses_conditional_requests(tmp_path):
    srv = CondServer("etag")
    try:
        srv.set("/set.yaml", b"manifests: [{name: a, source: /a.yaml}]\n")
        loader = SetLoader(ManifestSetConfig(source=srv.url("/set.yaml")), cache_dir=str(tmp_path), object_bytes=None)
        got, changed = loader.load()
        assert changed and loader.mode == "http"
        got2, changed = loader.load()
        assert not changed and got2 == got
        assert [e["status"] for e in srv.log] == [200, 304]
        assert srv.log[1]["headers"]["if-none-match"].startswith('"')
        srv.set("/set.yaml", b"manifests: [{name: b, source: /b.yaml}]\n")
        got3, changed = loader.load()
        assert changed and [m.name for m in got3.members] == ["b"]
        srv.set("/set.yaml", b"manifests: [{name: b, source: relative}]\n")
        with pytest.raises(SetError, match="absolute"):
            loader.load()
        assert [m.name for m in loader.current.members] == ["b"]
        del srv.bodies["/set.yaml"]
        with pytest.raises(SetError, match="404"):
            loader.load()
    finally:
        srv.close()


def test_git_mode_against_a_real_repository(tmp_path):
    repo = git_repo(str(tmp_path / "repo"))
    rev1 = commit(repo, {"sets/web.yaml": "manifests: [{name: web, source: /srv/web.yaml}]\n"})
    cfg = ManifestSetConfig(source=f"git+file://{repo}?path=sets/web.yaml", ref="main")
    loader = SetLoader(cfg, cache_dir=str(tmp_path / "cache"), object_bytes=None)
    got, changed = loader.load()
    assert changed and got.revision == rev1 and [m.name for m in got.members] == ["web"]
    st = loader.status()
    assert st["mode"] == "git" and st["revision"] == rev1 and st["source"] == f"file://{repo}"
    assert not os.path.exists(os.path.join(str(tmp_path / "cache"), "sets"))   # nothing checked out
    _, changed = loader.load()
    assert not changed
    rev2 = commit(repo, {"sets/web.yaml": "manifests: [{name: web, source: /srv/web2.yaml}]\n"})
    got, changed = loader.load()
    assert changed and got.revision == rev2 and got.members[0].source == "/srv/web2.yaml"
    commit(repo, {"sets/web.yaml": "manifests: [{name: web}]\n"})
    with pytest.raises(SetError, match="source: is required"):
        loader.load()
    assert loader.current.revision == rev2 and loader.status()["revision"] == rev2
    git(repo, "rm", "-q", "sets/web.yaml")
    git(repo, "commit", "-q", "-m", "rm")
    with pytest.raises(SetError, match="not found"):
        loader.load()


def test_git_tags_and_missing_refs(tmp_path):
    repo = git_repo(str(tmp_path / "repo"))
    rev1 = commit(repo, {"manifests.yaml": "manifests: []\n"})
    git(repo, "tag", "v1")
    commit(repo, {"manifests.yaml": "manifests: [{name: x, source: /x.yaml}]\n"})
    loader = SetLoader(ManifestSetConfig(source=f"git+file://{repo}?ref=v1"), cache_dir=str(tmp_path / "c"),
                       object_bytes=None)
    got, _ = loader.load()
    assert got.revision == rev1 and got.members == ()
    bad = SetLoader(ManifestSetConfig(source=f"git+file://{repo}?ref=nope"), cache_dir=str(tmp_path / "c"),
                    object_bytes=None)
    with pytest.raises(SetError, match="git fetch"):
        bad.load()


def _big_commit(repo, n, size=6 << 20):
    with open(os.path.join(repo, "big.bin"), "wb") as fh:
        fh.write(os.urandom(size))
    return commit(repo, {"manifests.yaml": f"manifests: [{{name: m{n}, source: /srv/m{n}.yaml}}]\n"}, f"c{n}")


def test_git_cache_holds_one_commits_trees_and_the_set_file(tmp_path):
    """Commits of a large blob elsewhere in the repository: nothing of it is fetched, and old
    commits are pruned (the cache used to grow by the whole tree at every commit)."""
    def tree_bytes(path):
        return sum(os.lstat(os.path.join(d, f)).st_blocks * 512 for d, _, fs in os.walk(path) for f in fs)

    repo = git_repo(str(tmp_path / "repo"))
    git(repo, "config", "uploadpack.allowFilter", "true")   # what hosted git servers allow
    cache = str(tmp_path / "cache")
    loader = SetLoader(ManifestSetConfig(source=f"git+file://{repo}", ref="main"), cache_dir=cache, object_bytes=None)
    sizes = []
    for n in range(3):
        rev = _big_commit(repo, n)
        got, changed = loader.load()
        assert changed and got.revision == rev and got.members[0].name == f"m{n}"
        sizes.append(tree_bytes(cache))
    assert max(sizes) < 1 << 20, sizes
    with open(os.path.join(cache, os.listdir(cache)[0], "config")) as fh:
        assert "file://" not in fh.read()   # the remote (and any credentials in it) is never stored


def test_git_disk_budget_stops_a_fetch_that_grows_past_it(tmp_path):
    """A server that ignores the filter sends the whole tree: past the budget the fetch is
    stopped, the repository removed, and the error says why."""
    from ccm.agent.gitsource import GitError, GitFetcher, parse_git_source

    repo = git_repo(str(tmp_path / "repo"))
    _big_commit(repo, 0, size=12 << 20)
    cache = str(tmp_path / "cache")
    os.makedirs(cache)
    fetcher = GitFetcher(parse_git_source(f"git+file://{repo}", "main"), cache, budget=4 << 20)
    with pytest.raises(GitError, match=r"stopped: the cache would exceed its disk budget of 4 MiB"):
        fetcher.fetch()
    assert os.listdir(cache) == []
    fetcher.budget = 64 << 20
    data, _rev = fetcher.fetch()
    assert data.startswith(b"manifests:")


def test_git_errors_carry_gits_own_cause(tmp_path):
    loader = SetLoader(ManifestSetConfig(source=f"git+file://{tmp_path}/nope.git"), cache_dir=str(tmp_path / "c"),
                       object_bytes=None)
    with pytest.raises(SetError) as err:
        loader.load()
    text = str(err.value)
    assert f"fatal: '{tmp_path}/nope.git' does not appear to be a git repository" in text, text
    assert "and the repository exists" not in text


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a repository owned by another user)")
def test_git_repository_of_another_user_names_the_ownership_problem(tmp_path):
    import pwd

    repo = git_repo(str(tmp_path / "repo"))
    commit(repo, {"manifests.yaml": "manifests: []\n"})
    nobody = pwd.getpwnam("nobody")
    for dirpath, _dirs, files in os.walk(repo):
        for name in [dirpath] + [os.path.join(dirpath, f) for f in files]:
            os.lchown(name, nobody.pw_uid, nobody.pw_gid)
    loader = SetLoader(ManifestSetConfig(source=f"git+file://{repo}"), cache_dir=str(tmp_path / "c"),
                       object_bytes=None)
    with pytest.raises(SetError, match="fatal: detected dubious ownership in repository"):
        loader.load()
