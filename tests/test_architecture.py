"""The dependency inversion, checked on the source: who may import whom."""
from __future__ import annotations

import ast
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "ccm")


def modules():
    for dirpath, _dirs, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                if rel.endswith(".__init__"):
                    rel = rel[: -len(".__init__")]
                yield rel, path


def imports_of(path, module):
    tree = ast.parse(open(path, encoding="utf-8").read())
    pkg = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            elif node.module:
                module = node.module
            else:
                continue
            yield module
            # `from ccm import X` / `from ccm.pkg import mod`: X may be a module, and the
            # rules must see it (otherwise that form would pass every rule).
            if ours(module):
                for a in node.names:
                    if f"{module}.{a.name}" in ALL:
                        yield f"{module}.{a.name}"


def ours(name):
    return name == "ccm" or name.startswith("ccm.")


ALL = dict(modules())
# importable from every layer: it imports nothing at run time (test_the_typing_guard_imports_nothing)
LEAVES = ("ccm", "ccm.typing_guard")
GOCOMPAT_STDLIB = {"__future__", "collections", "datetime", "decimal", "json", "math", "re", "typing",
                   "time",       # time.Now() and the host's local zone rules (Go's time.Local)
                   "zoneinfo"}   # time.LoadLocation("Europe/Zurich"): the system tz database


def test_from_ccm_import_resolves_to_the_module():
    tree_src = "from ccm import templates\nfrom ccm.gocompat import json as j\nfrom ccm.model.errors import CCMError\n"
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(tree_src)
    try:
        found = set(imports_of(fh.name, "ccm.expr.x"))
    finally:
        os.unlink(fh.name)
    assert {"ccm.templates", "ccm.gocompat.json", "ccm.model.errors"} <= found, found
    assert "ccm.model.errors.CCMError" not in found


def test_gocompat_is_stdlib_only_and_self_contained():
    for mod, path in ALL.items():
        if not mod.startswith("ccm.gocompat"):
            continue
        for imp in imports_of(path, mod):
            if ours(imp):
                assert imp.startswith("ccm.gocompat") or imp in LEAVES, f"{mod} imports {imp}"
            else:
                assert imp.split(".")[0] in GOCOMPAT_STDLIB, f"{mod} imports {imp} (stdlib only, from a short list)"


def test_expressions_do_not_import_templates():
    for mod, path in ALL.items():
        if mod.startswith("ccm.expr"):
            bad = [i for i in imports_of(path, mod) if i == "ccm.templates" or i.startswith("ccm.templates.")]
            assert not bad, f"{mod} imports {bad}"


# ccm/model is contracts only and does no I/O: what it may import, and the builtins it may not
# call. Pure standard-library helpers only (no os, sys, time, io, socket, subprocess, random,
# threading, ...: no clock, files, processes, environment or randomness); of ours, itself,
# the typing guard and Go's timestamp text (pure functions, checked below).
MODEL_STDLIB = {"__future__", "collections.abc", "difflib", "re", "typing"}
MODEL_OURS = {"ccm.typing_guard", "ccm.gocompat.rfc3339"}
NO_IO_BUILTINS = {"open", "print", "input", "exec", "eval", "compile", "breakpoint", "__import__", "exit", "quit"}


def _io_free_problems(mod, path, stdlib, ours_allowed):
    problems = []
    for imp in imports_of(path, mod):
        if ours(imp):
            if not (imp.startswith("ccm.model") or imp in ours_allowed or imp in LEAVES):
                problems.append(f"{mod} imports {imp}")
        elif imp not in stdlib:
            problems.append(f"{mod} imports {imp} (not among {sorted(stdlib)})")
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NO_IO_BUILTINS:
            problems.append(f"{mod}:{node.lineno} calls {node.func.id}()")
    return problems


def test_model_is_contracts_without_io():
    """The model imports the short list above and calls no I/O builtin; the pure helpers it
    uses from outside it import nothing that does I/O either."""
    problems = []
    for mod, path in ALL.items():
        if mod.startswith("ccm.model"):
            problems += _io_free_problems(mod, path, MODEL_STDLIB, MODEL_OURS)
    for mod in MODEL_OURS:
        problems += _io_free_problems(mod, ALL[mod], MODEL_STDLIB | {"datetime"}, set())
    assert problems == [], problems


# where the timestamp goes in each wire object's constructor (positional index, keyword)
STAMPED = {"ResourceState": (8, "timestamp_ns"), "TransactionEvent": (20, "timestamp_ns"),
           "SessionStartEvent": (1, "timestamp_ns")}


def test_every_new_event_and_state_is_stamped_by_its_maker():
    """The model reads no clock (0 is Go's zero time on the wire), so every construction of
    a wire object outside the model passes its timestamp (``ccm.clock.now_ns()``)."""
    problems = []
    for mod, path in sorted(ALL.items()):
        if mod.startswith("ccm.model"):
            continue
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in STAMPED:
                index, keyword = STAMPED[node.func.id]
                if len(node.args) <= index and keyword not in [k.arg for k in node.keywords]:
                    problems.append(f"{mod}:{node.lineno}: {node.func.id}(...) without {keyword}")
    assert problems == [], problems


def test_the_model_rule_catches_io(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom time import time_ns\nfrom ccm.clock import now_ns\n"
                   "def f():\n    return open('/etc/passwd').read()\n")
    problems = _io_free_problems("ccm.model.bad", str(bad), MODEL_STDLIB, MODEL_OURS)
    assert [p.split(" (")[0] for p in problems] == [
        "ccm.model.bad imports os", "ccm.model.bad imports time", "ccm.model.bad imports ccm.clock",
        "ccm.model.bad:5 calls open()"]


def test_model_defines_no_lazy_descriptors_or_bypassed_constructors():
    """Contracts are plain classes: no descriptor class (``__get__``), no property setter
    making a field on first read, no ``object.__new__`` (fast twins live outside, behind a
    switch: ``ccm.resources.flowevents``, ``ccm.resources.file.steady``)."""
    problems = []
    for mod, path in ALL.items():
        if not mod.startswith("ccm.model"):
            continue
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in ("__get__", "__set_name__"):
                problems.append(f"{mod}:{node.lineno}: descriptor method {node.name}")
            if isinstance(node, ast.Attribute) and node.attr == "setter":
                problems.append(f"{mod}:{node.lineno}: property setter")
            if isinstance(node, ast.Attribute) and node.attr == "__new__" and getattr(node.value, "id", "") == "object":
                problems.append(f"{mod}:{node.lineno}: object.__new__")
    assert problems == [], problems


BOOT = os.path.join(ROOT, "pyzboot")
# ccm.pyz's boot code: its package in the source tree, and its modules as the zip names them
BOOT_NAMES = ("pyzboot", "_ccm_stub", "_ccm_boot", "_ccm_bundle")


def boot_modules():
    for f in sorted(os.listdir(BOOT)):
        if f.endswith(".py"):
            yield ("pyzboot" if f == "__init__.py" else "pyzboot." + f[:-3]), os.path.join(BOOT, f)


def test_ccm_never_imports_the_boot_package():
    for mod, path in ALL.items():
        bad = [i for i in imports_of(path, mod) if i.split(".")[0] in BOOT_NAMES]
        assert not bad, f"{mod} imports the zipapp's boot code: {bad}"


def test_the_boot_package_imports_nothing_of_ccm_but_hands_over_to_its_entry():
    """The stub names the entry module (``ccm.__main__``) and imports it by that name once;
    no boot module imports anything of ccm otherwise. Each stays under 450 lines."""
    found = list(boot_modules())
    assert {m for m, _ in found} >= {"pyzboot.stub", "pyzboot.boot", "pyzboot.bundle"}
    for mod, path in found:
        bad = [i for i in imports_of(path, mod) if ours(i)]
        assert not bad, f"{mod} imports {bad}"
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        assert text.count("\n") < 450, f"{mod} has {text.count(chr(10))} lines"
    with open(os.path.join(BOOT, "stub.py"), encoding="utf-8") as fh:
        stub = fh.read()
    assert 'ENTRY_MODULE = "ccm.__main__"' in stub and stub.count("__import__(ENTRY_MODULE") == 1


FORBIDDEN_FOR_RESOURCES = ("ccm.manager", "ccm.cli", "ccm.agent", "ccm.apply.")


def test_resources_never_import_manager_cli_or_other_types():
    types = {m.split(".")[2] for m in ALL if m.startswith("ccm.resources.") and m.count(".") >= 3}
    for mod, path in ALL.items():
        if not mod.startswith("ccm.resources."):
            continue
        own = mod.split(".")[2]
        for imp in imports_of(path, mod):
            assert not imp.startswith(FORBIDDEN_FOR_RESOURCES), f"{mod} imports {imp}"
            assert imp != "ccm.apply", f"{mod} imports the manifest engine (nested applies go through ctx.apply_child)"
            if imp.startswith("ccm.resources.") and imp.count(".") >= 2:
                other = imp.split(".")[2]
                if other in types and other != own:
                    # the service/package types may be probed by goss; nothing else crosses types
                    pytest.fail(f"{mod} imports another type: {imp}")


def test_pure_leaves_do_not_import_engine():
    leaves = ("ccm.expr", "ccm.templates", "ccm.data", "ccm.registry")
    engine = ("ccm.manager", "ccm.cli", "ccm.apply", "ccm.resources.base", "ccm.agent", "ccm.session")
    for mod, path in ALL.items():
        if mod.startswith(leaves):
            bad = [i for i in imports_of(path, mod) if i.startswith(engine)]
            assert not bad, f"{mod} imports {bad}"


def test_cli_never_imports_providers():
    for mod, path in ALL.items():
        if mod.startswith("ccm.cli"):
            for imp in imports_of(path, mod):
                parts = imp.split(".")
                if imp.startswith("ccm.resources.") and len(parts) >= 4:
                    pytest.fail(f"{mod} imports provider module {imp}")


def test_only_one_list_of_types():
    """No hand-maintained type switches: type names appear as a table only in ccm.resources."""
    from ccm.resources import BUILTIN_TYPES

    offenders = []
    for mod, path in ALL.items():
        if mod == "ccm.resources" or mod.startswith(("ccm.resources.", "ccm.healthcheck")):
            continue
        text = open(path, encoding="utf-8").read()
        hits = sum(1 for t in BUILTIN_TYPES if f'"{t}"' in text)
        if hits >= 5:
            offenders.append(mod)
    assert not offenders, f"modules listing resource types by hand: {offenders}"


def test_help_imports_no_engine_module():
    import subprocess

    code = ("import sys; from ccm.cli.main import main; main(['--help']);"
            "print(sorted(m for m in sys.modules if m.startswith('ccm') and m not in ('ccm', 'ccm.cli', 'ccm.cli.main',"
            " 'ccm.typing_guard')))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout


def test_nats_is_imported_only_when_a_nats_feature_runs():
    """Importing ccm, ``--help``, building a manager and loading a plain manifest never import nats."""
    import subprocess

    code = ("import sys; from ccm.cli.main import main; main(['--help']); import ccm.manager, ccm.apply;"
            "import ccm.nats, ccm.nats.context, ccm.nats.functions, ccm.registration.entry, ccm.registration.filesd;"
            "m = ccm.manager.Manager(facts={}); assert 'kvGet' in m.template_function_names();"
            "print(sorted(x for x in sys.modules if x == 'nats' or x.startswith(('nats.', 'asyncio'))))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout


def test_import_ccm_and_help_never_import_heavy_modules():
    """``import ccm`` and ``ccm --help`` load no NATS client (nor jsonschema/prometheus)."""
    import subprocess

    code = ("import sys, ccm; from ccm.cli.main import main; main(['--help']);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nats', 'jsonschema', 'prometheus_client')))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout + r.stderr


def written_budget():
    """The two module lists of ``ccm.typing_guard``'s budget: (ccm modules, standard library)."""
    import ccm.typing_guard

    doc = ccm.typing_guard.__doc__ or ""
    lists = []
    for title in ("ccm modules:", "standard library modules"):
        block = doc[doc.index(title):].split("\n", 1)[1]
        words = []
        for line in block.split("\n"):
            if not line.startswith("    "):
                break
            words += line.split()
        lists.append(set(words))
    return lists[0], lists[1]


def test_the_written_budget_is_a_list_of_modules():
    ours_, stdlib = written_budget()
    assert "ccm.typing_guard" in ours_ and "ccm.model.events" in ours_ and "os" in stdlib
    assert all(m == "ccm" or m.startswith("ccm.") for m in ours_) and not any(m.startswith("ccm") for m in stdlib)
    assert "typing" not in stdlib and "re" not in stdlib


def test_steady_plain_apply_imports_the_written_budget(tmp_path):
    """A steady ``ccm apply`` of a plain file manifest imports exactly the ccm modules
    ``ccm.typing_guard`` lists, and no standard-library module it does not list (typing,
    re, logging, subprocess, threading, json, hashlib ... each cost every cron run)."""
    import json
    import subprocess

    target = tmp_path / "f.conf"
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("ccm:\n  resources:\n    - file:\n        - %s:\n            ensure: present\n"
                        "            content: \"x\\n\"\n            owner: \"%d\"\n            group: \"%d\"\n"
                        "            mode: \"0644\"\n" % (target, os.getuid(), os.getgid()))
    # -S: no site (a venv's or pyenv's .pth files and site load re, typing, urllib ...); the
    # dependencies come from this interpreter's site-packages on PYTHONPATH instead
    site_dirs = [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    env = dict(os.environ, HOME=str(tmp_path), CCM_CACHE_DIR=str(tmp_path / "cache"),
               CCM_LOCK_DIR=str(tmp_path / "locks"), PYTHONPATH=os.pathsep.join([ROOT] + site_dirs))
    # the module list is taken before json (which imports re) is loaded to print it
    code = ("import sys; from ccm.cli.main import main; rc = main(['apply', '--no-report', %r]);"
            "mods = sorted(sys.modules); import json; print(json.dumps([rc, mods]))" % str(manifest))
    runs = [subprocess.run([sys.executable, "-S", "-c", code], cwd=str(tmp_path), env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]  # first run, then steady
    for r in runs:
        assert r.returncode == 0 and json.loads(r.stdout.strip().splitlines()[-1])[0] == 0, r.stderr
    assert target.read_text() == "x\n"
    rc, loaded = json.loads(runs[1].stdout.strip().splitlines()[-1])
    assert rc == 0
    # what this interpreter loads before any code of ours (a pyenv build's site loads urllib)
    bare = subprocess.run([sys.executable, "-S", "-c", "import sys; mods = sorted(sys.modules); import json; "
                           "print(json.dumps(mods))"],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=60)
    on_path = set(loaded) - set(json.loads(bare.stdout))
    written_ours, written_stdlib = written_budget()
    ours_on_path = {m for m in on_path if m == "ccm" or m.startswith("ccm.")}
    assert sorted(ours_on_path - written_ours) == [], "imported on the apply path, not in the budget"
    assert sorted(written_ours - ours_on_path) == [], "in the budget, no longer imported: take it off the list"
    assert sorted(on_path - ours_on_path - written_stdlib) == [], "imported on the apply path, not in the budget"


# --- names imported for the type checker only ------------------------------------------------

def _is_type_checking_if(node):
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"))


def _bound(nodes):
    """Names a sequence of statements binds in its own scope (not in nested functions)."""
    out = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        stack.extend(ast.iter_child_nodes(node))
    return out


def runtime_uses_of_type_checking_names(source):
    """(line, name): a name bound only under ``if TYPE_CHECKING:`` but evaluated when the
    module runs (a NameError waiting for that line: annotations are not evaluated here)."""
    tree = ast.parse(source)
    checking = set()
    for node in tree.body:
        if _is_type_checking_if(node):
            checking |= _bound(node.body)
    runtime = _bound([n for n in tree.body if not _is_type_checking_if(n)])
    for node in tree.body:
        if _is_type_checking_if(node):
            runtime |= _bound(node.orelse)
    suspects = checking - runtime
    found = []

    def visit(node, local):
        if _is_type_checking_if(node):
            for sub in node.orelse:
                visit(sub, local)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for a in args.args + args.kwonlyargs + args.posonlyargs:
                if a.annotation is not None:
                    pass   # not evaluated (from __future__ import annotations)
            for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
                visit(default, local)
            for deco in getattr(node, "decorator_list", []):
                visit(deco, local)
            body = node.body if isinstance(node.body, list) else [node.body]
            inner = local | _bound(body) | {a.arg for a in args.args + args.kwonlyargs + args.posonlyargs}
            inner |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
            for sub in body:
                visit(sub, inner)
            return
        if isinstance(node, ast.ClassDef):
            for part in node.bases + node.keywords + node.decorator_list:
                visit(part, local)
            for sub in node.body:
                visit(sub, local)
            return
        if isinstance(node, ast.AnnAssign):
            for part in (node.target, node.value):
                if part is not None:
                    visit(part, local)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in suspects and node.id not in local:
                found.append((node.lineno, node.id))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    for node in tree.body:
        visit(node, set())
    return sorted(set(found))


def test_runtime_uses_of_type_checking_names_are_found():
    bad = ("from __future__ import annotations\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n"
           "    from typing import Dict, Mapping, Tuple\nAlias = Tuple[int, int]\n"
           "def f(x: Mapping) -> Dict[str, int]:\n    y: Dict[str, int] = {}\n"
           "    return isinstance(x, Mapping)\n")
    assert runtime_uses_of_type_checking_names(bad) == [(5, "Tuple"), (8, "Mapping")]
    good = ("from __future__ import annotations\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n"
            "    from typing import Protocol\n    Alias = int\nelse:\n    from x import Protocol\n"
            "class P(Protocol):\n    a: Alias\ndef g() -> Alias:\n    import threading\n"
            "    return threading\n")
    assert runtime_uses_of_type_checking_names(good) == []


def test_names_imported_for_the_type_checker_are_not_used_at_run_time():
    """Typing lives under ``if TYPE_CHECKING:`` on the plain apply path (issue 16): a module
    using such a name in a run-time expression (a type alias, ``isinstance``, a base class)
    fails with NameError only when that line runs; found here for every module."""
    problems = []
    for module, path in sorted(ALL.items()):
        with open(path, encoding="utf-8") as fh:
            for line, name in runtime_uses_of_type_checking_names(fh.read()):
                problems.append(f"{module}:{line}: {name}")
    assert problems == [], problems


# --- the typing rule (ccm.typing_guard's docstring) ------------------------------------------

def _typing_imports_at_run_time(tree):
    """(line, names) of each ``typing`` import not under ``if TYPE_CHECKING:``."""
    found = []

    def visit(node):
        if _is_type_checking_if(node):
            for sub in node.orelse:
                visit(sub)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, [a.name]) for a in node.names if a.name.split(".")[0] == "typing")
        elif isinstance(node, ast.ImportFrom) and node.module == "typing" and not node.level:
            found.append((node.lineno, [a.name for a in node.names]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_typing_is_imported_for_the_type_checker_only():
    """Every module follows the one rule: ``TYPE_CHECKING`` from ``ccm.typing_guard``,
    typing's names under ``if TYPE_CHECKING:`` (``NamedTuple`` aside)."""
    problems = []
    for module, path in sorted(ALL.items()):
        if module == "ccm.typing_guard":
            continue
        tree = ast.parse(open(path, encoding="utf-8").read())
        for line, names in _typing_imports_at_run_time(tree):
            if names != ["NamedTuple"]:
                problems.append(f"{module}:{line}: typing {names} imported at run time")
        guarded = any(_is_type_checking_if(n) for n in ast.walk(tree))
        from_guard = any(isinstance(n, ast.ImportFrom) and n.module == "ccm.typing_guard"
                         and "TYPE_CHECKING" in [a.name for a in n.names] for n in tree.body)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "TYPE_CHECKING" for t in node.targets):
                problems.append(f"{module}:{node.lineno}: TYPE_CHECKING assigned (import it from ccm.typing_guard)")
            if isinstance(node, ast.ImportFrom) and node.module in ("typing", "ccm.model.lite_typing") \
                    and "TYPE_CHECKING" in [a.name for a in node.names]:
                problems.append(f"{module}:{node.lineno}: TYPE_CHECKING from {node.module}")
        if guarded and not from_guard:
            problems.append(f"{module}: if TYPE_CHECKING without the import from ccm.typing_guard")
    assert problems == [], problems


def test_names_bound_for_the_type_checker_only_are_not_imported_at_run_time():
    """``from ccm.x import Alias`` at run time fails when ``ccm.x`` binds ``Alias`` only
    under ``if TYPE_CHECKING:`` (a type alias, a typing name)."""
    checking_only = {}
    for module, path in ALL.items():
        tree = ast.parse(open(path, encoding="utf-8").read())
        checking = set()
        runtime = _bound([n for n in tree.body if not _is_type_checking_if(n)])
        for node in tree.body:
            if _is_type_checking_if(node):
                checking |= _bound(node.body)
                runtime |= _bound(node.orelse)
        checking_only[module] = checking - runtime
    problems = []
    for module, path in sorted(ALL.items()):
        stack = list(ast.parse(open(path, encoding="utf-8").read()).body)
        while stack:
            node = stack.pop()
            if _is_type_checking_if(node):
                stack.extend(node.orelse)
                continue
            if isinstance(node, ast.ImportFrom) and not node.level and node.module in checking_only:
                bad = [a.name for a in node.names if a.name in checking_only[node.module]]
                if bad:
                    problems.append(f"{module}:{node.lineno}: {bad} from {node.module}")
            stack.extend(ast.iter_child_nodes(node))
    assert problems == [], problems


def test_the_typing_guard_imports_nothing():
    """Every layer may import it (``LEAVES``) because it imports nothing when ccm runs."""
    runtime = []
    stack = list(ast.parse(open(ALL["ccm.typing_guard"], encoding="utf-8").read()).body)
    while stack:
        node = stack.pop()
        if _is_type_checking_if(node):
            stack.extend(node.orelse)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            runtime.append(getattr(node, "module", None) or node.names[0].name)
        else:
            stack.extend(ast.iter_child_nodes(node))
    assert runtime == ["__future__"]


def test_the_run_time_stand_ins_behave_as_typing_marks_them():
    from ccm.typing_guard import Generic, Protocol, TypeVar

    T = TypeVar("T")

    class Proto(Protocol):
        name: str

    class Sub(Proto):   # implements it by naming it
        name = "x"

    class Box(Generic[T]):
        pass

    class IntBox(Box[int]):
        pass

    assert Proto._is_protocol and not Sub._is_protocol
    assert IntBox.__mro__[1] is Box and IntBox.__orig_bases__[0].__args__ == (int,)
    assert repr(IntBox.__orig_bases__[0]).endswith("Box[int]") and T == "T"


# --- the map (ARCHITECTURE.md) ----------------------------------------------------------------

TESTS = os.path.join(ROOT, "tests")


def _switches_on_the_map():
    import re

    with open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8") as fh:
        return sorted(set(re.findall(r"\b(CCM_[A-Z0-9_]+)=0\b", fh.read())))


def _test_sources():
    for dirpath, _dirs, files in os.walk(TESTS):
        for f in files:
            path = os.path.join(dirpath, f)
            if f.startswith("test_") and f.endswith(".py") and path != os.path.abspath(__file__):
                with open(path, encoding="utf-8") as fh:
                    yield os.path.relpath(path, ROOT), fh.read()


def test_every_switch_on_the_map_exists_and_has_a_differential_test():
    """Each ``CCM_X=0`` that ARCHITECTURE.md names is read by ccm (``"CCM_X"`` in a module of
    ccm/) and is set by a test that compares both paths through ``tests/twins.py``."""
    switches = _switches_on_the_map()
    assert len(switches) >= 3, switches   # CCM_WRITE_BATCH, CCM_FILE_STEADY, CCM_LAZY_EVENTS at least
    sources = {mod: open(path, encoding="utf-8").read() for mod, path in ALL.items()}
    tests = dict(_test_sources())
    problems = []
    for name in switches:
        if not any(f'"{name}"' in text for text in sources.values()):
            problems.append(f"{name}: no module of ccm/ reads it")
        differential = [path for path, text in tests.items() if name in text and "from tests import twins" in text]
        if not differential:
            problems.append(f"{name}: no test naming it compares the two paths (tests/twins.py)")
    assert problems == [], problems


def test_every_switch_on_the_map_is_read_and_tested():
    """Every ``CCM_*`` variable ARCHITECTURE.md names is read by ccm/ or the boot package and
    set by some test (the switches that are not ``=0`` included: the import bundle's, the
    report client's, the sync mode)."""
    import re

    with open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8") as fh:
        names = sorted(set(re.findall(r"\b(CCM_[A-Z0-9_]+)\b", fh.read())))
    code = [open(path, encoding="utf-8").read() for _mod, path in list(ALL.items()) + list(boot_modules())]
    tests = [text for _path, text in _test_sources()]
    problems = [f"{name}: not read by ccm/ or pyzboot/" for name in names if not any(f'"{name}"' in t for t in code)]
    problems += [f"{name}: no test sets it" for name in names if not any(name in t for t in tests)]
    assert len(names) >= 6 and problems == [], (names, problems)
