"""CLI plugins (App Builder definitions) run as the real ``ccm`` in a subprocess.

The plugin files are upstream's documentation examples (docs/content/cli/plugins.md) and
App Builder's own (common-settings, exec, templating), pointed at temporary manifests.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from tests.kit import ccm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture()
def home(tmp_path):
    """A HOME whose user plugin directory exists, and a ``ccm`` on PATH (for plugins that
    run ``ccm apply ...`` as upstream's examples do)."""
    (tmp_path / "xdg" / "choria" / "ccm" / "plugins").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "ccm"
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m ccm \"$@\"\n")
    shim.chmod(0o755)
    return tmp_path


def plugin_dir(home):
    return home / "xdg" / "choria" / "ccm" / "plugins"


def write_plugin(home, name, text):
    path = plugin_dir(home) / f"{name}-plugin.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def env_of(home, **extra):
    env = {"PATH": f"{home / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}", "PYTHONPATH": ROOT,
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"), "CCM_LOCK_DIR": str(home / "locks"),
           "CCM_CACHE_DIR": str(home / "cache")}
    env.update(extra)
    return env


def file_manifest(path, content):
    return textwrap.dedent(f"""\
        ccm:
          resources:
            - file:
                - {path}:
                    ensure: present
                    owner: root
                    group: root
                    mode: "0644"
                    content: "{content}"
        """)


# --- upstream's documentation examples -------------------------------------------------------

def test_docs_basic_example_runs_ccm_apply(home):
    manifest = home / "webserver.yaml"
    manifest.write_text(file_manifest(home / "web.conf", "web\\n"))
    write_plugin(home, "deploy", f"""\
        # deploy-plugin.yaml
        name: deploy
        description: Deploy application configuration
        commands:
          - name: web
            description: Deploy web server configuration
            type: exec
            command: |
              ccm apply {manifest}
        """)
    r = ccm("deploy", "web", cwd=home, env=env_of(home))
    assert r.returncode == 0, r.stderr
    assert (home / "web.conf").read_text() == "web\n"
    assert "Manifest Run Summary" in r.stdout


def test_docs_environment_and_facts_examples(home):
    manifest = home / "app.yaml"
    manifest.write_text(file_manifest(home / "app.conf",
                                      "environment: {{ lookup('environ.DEPLOY_ENV') }} "
                                      "version: {{ lookup('facts.app_version') }}\\n"))
    write_plugin(home, "deploy", f"""\
        name: deploy
        description: Deploy with custom facts
        commands:
          - name: app
            description: Deploy application
            type: exec
            environment:
              - "DEPLOY_ENV=production"
              - "LOG_LEVEL=warn"
            arguments:
              - name: version
                description: Application version to deploy
                required: true
            command: |
              ccm apply {manifest} --fact app_version={{{{ .Arguments.version }}}}
        """)
    r = ccm("deploy", "app", "1.2.3", cwd=home, env=env_of(home))
    assert r.returncode == 0, r.stderr
    assert (home / "app.conf").read_text() == "environment: production version: 1.2.3\n"
    missing = ccm("deploy", "app", cwd=home, env=env_of(home))
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: the following arguments are required: version\n\nusage: ccm deploy app")


def test_app_builder_cowsay_example_with_config_banner_default_and_escape(home):
    write_plugin(home, "demo", """\
        name: demo
        description: Demo application for Choria App Builder
        commands:
          - name: say
            description: Say something using the configured command
            type: exec
            command: |
              {{ default .Config.Cowsay "echo" }} {{ .Arguments.message | escape }}
            banner: |
              {{- if (default .Config.Cowsay "") -}}
              >>
              >> Using the {{ .Config.Cowsay }} command
              >>
              {{- end -}}
            arguments:
              - name: message
                description: The message to send to the terminal
                required: true
        """)
    r = ccm("demo", "say", "hello 'world'; rm -rf /", cwd=home, env=env_of(home))
    assert (r.returncode, r.stdout) == (0, "hello 'world'; rm -rf /\n"), r.stderr
    (plugin_dir(home) / "demo-cfg.yaml").write_text("Cowsay: printf '%s|'\n")
    r = ccm("demo", "say", "hi", cwd=home, env=env_of(home))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ">>\n>> Using the printf '%s|' command\n>>\nhi|"


# --- every plugin, the user's over the system's, no directories made ---------------------------

def test_every_plugin_is_mounted_not_only_the_first(home):
    for name in ("alpha", "beta", "gamma"):
        write_plugin(home, name, f"""\
            name: {name}
            description: The {name} plugin
            commands:
              - name: hello
                description: Say hello
                type: exec
                command: echo {name}
            """)
    for name in ("alpha", "beta", "gamma"):
        r = ccm(name, "hello", cwd=home, env=env_of(home))
        assert (r.returncode, r.stdout) == (0, f"{name}\n"), r.stderr
    listed = ccm("--help", cwd=home, env=env_of(home)).stdout
    assert "Plugin commands:\n  alpha         The alpha plugin\n  beta          The beta plugin\n" \
           "  gamma         The gamma plugin\n" in listed


def test_plugins_below_subdirectories_count_and_other_names_do_not(home):
    (plugin_dir(home) / "team").mkdir()
    (plugin_dir(home) / "team" / "deep-plugin.yaml").write_text(
        "name: deep\ndescription: d\ncommands:\n  - name: x\n    description: x\n    type: exec\n    command: echo deep\n")
    (plugin_dir(home) / "old-plugin.yaml.orig").write_text("not: loaded\n")   # upstream's regexp takes it
    assert ccm("deep", "x", cwd=home, env=env_of(home)).stdout == "deep\n"
    r = ccm("old", "x", cwd=home, env=env_of(home))
    assert r.returncode == 1 and 'expected command but got "old"' in r.stderr


def test_a_user_plugin_overrides_a_system_plugin(tmp_path, monkeypatch):
    from ccm.cli import plugins

    system = tmp_path / "etc"
    user = tmp_path / "xdg" / "choria" / "ccm" / "plugins"
    system.mkdir()
    user.mkdir(parents=True)
    (system / "deploy-plugin.yaml").write_text("name: deploy\n")
    (system / "other-plugin.yaml").write_text("name: other\n")
    (user / "deploy-plugin.yaml").write_text("name: deploy\n")
    monkeypatch.setattr(plugins, "SYSTEM_DIR", str(system))
    found, warnings = plugins.discover({"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert found == {"deploy": str(user / "deploy-plugin.yaml"), "other": str(system / "other-plugin.yaml")}
    assert warnings == []


def test_no_plugin_directory_is_created(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    for args in (["--help"], ["nosuch"], ["--version"], ["cheat"]):
        subprocess.run([sys.executable, "-m", "ccm", *args], env=env, capture_output=True, timeout=60)
    assert not (tmp_path / "xdg").exists()


# --- help, names, bad files ---------------------------------------------------------------------

DEPLOY = """\
    name: deploy
    description: Deploy application configuration
    cheat:
      cheat: |
        # deploy the web tier
        ccm deploy web 1.2
    commands:
      - name: web
        description: Deploy web server configuration
        type: exec
        aliases: [w]
        cheat:
          label: webdeploy
          cheat: "# ccm deploy web VERSION --env staging"
        command: echo web {{ .Arguments.version }} {{ .Flags.env }} {{ .Flags.replicas }} {{ .Flags.force }}
        arguments:
          - name: version
            description: Application version to deploy
            required: true
        flags:
          - name: env
            description: Target environment
            enum: [production, staging]
            default: production
          - name: replicas
            description: How many copies
            type: int
            default: "2"
            placeholder: COUNT
          - name: force
            description: Deploy even when healthy
            bool: true
          - name: token
            description: API token
            env: DEPLOY_TOKEN
            short: t
            validate: len(value) < 8
"""


def test_plugin_help_lists_arguments_and_flags(home):
    write_plugin(home, "deploy", DEPLOY)
    top = ccm("deploy", "--help", cwd=home, env=env_of(home))
    assert top.returncode == 0, top.stderr
    assert "Deploy application configuration" in top.stdout
    assert "  deploy web [<flags>] <version>\n      Deploy web server configuration\n" in top.stdout
    for flag in ("--env=ENV", "--replicas=COUNT", "--force", "-t, --token=TOKEN"):
        assert flag in top.stdout
    web = ccm("deploy", "web", "--help", cwd=home, env=env_of(home))
    assert web.returncode == 0
    assert "version" in web.stdout and "Application version to deploy" in web.stdout
    assert "--env ENV" in web.stdout and "(one of: production, staging)" in web.stdout
    assert "--replicas COUNT" in web.stdout and "(default: 2)" in web.stdout
    assert ccm("help", "deploy", "web", cwd=home, env=env_of(home)).stdout == web.stdout
    assert "ccm deploy web [<flags>] <version>" in ccm("--help-long", cwd=home, env=env_of(home)).stdout


def test_plugin_values_reach_the_command_typed(home):
    write_plugin(home, "deploy", DEPLOY)
    assert ccm("deploy", "web", "1.2", cwd=home, env=env_of(home)).stdout == "web 1.2 production 2 false\n"
    assert ccm("deploy", "w", "1.3", "--env", "staging", "--replicas=0x10", "--force", cwd=home,
               env=env_of(home)).stdout == \
        "web 1.3 staging 16 true\n"
    for bad, message in ((["--env", "qa"], "argument --env: invalid choice: 'qa'"),
                         (["--replicas", "many"], "argument --replicas: expected an integer, got 'many'"),
                         (["--force=false"], "argument --force: ignored explicit argument 'false'"),
                         (["--token", "much-too-long"], "flag --token: 'much-too-long' did not pass the "
                                                         "validation 'len(value) < 8'"),
                         (["--rep", "3"], "unrecognized arguments: --rep 3")):
        r = ccm("deploy", "web", "1.2", *bad, cwd=home, env=env_of(home))
        assert r.returncode == 1 and r.stderr.startswith(f"error: {message}"), (bad, r.stderr)
        assert r.stdout == ""
    assert ccm("deploy", "web", "1", cwd=home, env=env_of(home, DEPLOY_TOKEN="abc")).returncode == 0


def test_a_plugin_cannot_shadow_a_built_in_command(home):
    write_plugin(home, "apply", DEPLOY.replace("name: deploy", "name: apply"))
    r = ccm("apply", "--help", cwd=home, env=env_of(home))
    assert r.returncode == 0 and r.stdout.startswith("usage: ccm apply [-h]")
    listed = ccm("--help", cwd=home, env=env_of(home))
    assert listed.returncode == 0
    assert f"ccm: warning: plugin {plugin_dir(home)}/apply-plugin.yaml skipped: 'apply' is a built-in command\n" \
        == listed.stderr


@pytest.mark.parametrize("text,problem", [
    ("name: [unclosed\n", "bad-plugin.yaml:2:1: did not find expected ',' or ']'"),
    ("name: bad\ncommands:\n  - name: x\n    type: exec\n    command: echo\n", "x: description is required"),
    ("name: bad\ncommands:\n  - name: x\n    description: d\n    type: form\n",
     "type form (interactive form wizards) is not supported by ccm"),
    ("name: bad\ncommands:\n  - name: x\n    description: d\n    type: exec\n    command: echo\n"
     "    transform:\n      jq: .\n", "transform (data transforms (graphs, jq, reports)) is not supported by ccm"),
    ("name: bad\ncommands:\n  - name: x\n    description: d\n    type: exec\n", "x: a command or script is required"),
    ("name: bad\ncommands:\n  - name: x\n    description: d\n    type: exec\n    command: echo\n    flags:\n"
     "      - name: n\n        description: n\n        default: 10\n",
     "flag 'n' default must be a string or boolean, quote the value like default: \"10\""),
    ("name: bad\ncommands:\n  - name: p\n    description: d\n    type: parent\n",
     "p: parent requires sub commands"),
    ("- just\n- a list\n", "expected a map of App Builder definition keys"),
    ("a:\n" + "".join("  " * i + "  b:\n" for i in range(1, 150)), "nesting deeper than"),
])
def test_a_malformed_plugin_is_one_line_naming_the_file_and_built_ins_still_work(home, text, problem):
    path = plugin_dir(home) / "bad-plugin.yaml"
    path.write_text(text)
    write_plugin(home, "good", DEPLOY.replace("name: deploy", "name: good"))
    r = ccm("bad", "x", cwd=home, env=env_of(home))
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ccm: error: plugin {path}") and problem in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    listed = ccm("--help", cwd=home, env=env_of(home))
    assert listed.returncode == 0 and "  good " in listed.stdout
    assert listed.stderr.count("\n") == 1 and str(path) in listed.stderr
    assert ccm("good", "web", "1", cwd=home, env=env_of(home)).returncode == 0
    assert ccm("session", "new", "--directory", str(home / "s"), cwd=home, env=env_of(home)).returncode == 0


def test_a_large_plugin_file_is_refused(home):
    path = plugin_dir(home) / "big-plugin.yaml"
    path.write_text("name: big\n# " + "x" * (1 << 20) + "\n")
    r = ccm("big", cwd=home, env=env_of(home))
    assert r.returncode == 1 and r.stderr == f"ccm: error: plugin {path}: larger than 1048576 bytes\n"


# --- confirm_prompt -------------------------------------------------------------------------------

CONFIRM = """\
    name: danger
    description: Dangerous things
    commands:
      - name: wipe
        description: Remove the data
        type: exec
        confirm_prompt: "Really?"
        banner: "about to wipe {{ .Arguments.what }}"
        command: touch {MARK}
        arguments:
          - name: what
            description: what
            default: all
"""


def test_confirm_prompt_without_a_terminal_refuses_and_runs_nothing(home):
    mark = home / "ran"
    write_plugin(home, "danger", CONFIRM.replace("{MARK}", str(mark)))
    r = ccm("danger", "wipe", cwd=home, env=env_of(home))
    assert r.returncode == 1
    assert r.stderr == ("ccm: error: 'Really?' needs an answer and there is no terminal to ask on: nothing was "
                        "run (pass --no-prompt to run without asking)\n")
    assert r.stdout == "about to wipe all\n"
    assert not mark.exists()
    r = ccm("danger", "wipe", "--no-prompt", cwd=home, env=env_of(home))
    assert r.returncode == 0, r.stderr
    assert mark.exists()


@pytest.mark.parametrize("answer,runs", [(b"y\n", True), (b"yes\n", True), (b"n\n", False), (b"\n", False)])
def test_confirm_prompt_asks_on_a_terminal(home, answer, runs):
    import pty

    mark = home / "ran"
    write_plugin(home, "danger", CONFIRM.replace("{MARK}", str(mark)))
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "ccm", "danger", "wipe"], cwd=str(home), env=env_of(home),
                                stdin=slave, stdout=slave, stderr=slave)
        os.close(slave)
        seen = b""
        while b"(y/N)" not in seen:
            seen += os.read(master, 1024)
        os.write(master, answer)
        proc.wait(60)
        try:
            while True:
                seen += os.read(master, 1024)
        except OSError:
            pass
    finally:
        os.close(master)
    assert b"? Really? (y/N)" in seen
    assert mark.exists() == runs
    assert proc.returncode == (0 if runs else 1)
    if not runs:
        assert b"ccm: error: aborted" in seen


# --- exec details, ccm_manifest -------------------------------------------------------------------

def test_exec_status_script_dir_and_dry_run(home):
    write_plugin(home, "tool", f"""\
        name: tool
        description: tools
        commands:
          - name: fail
            description: exits 3
            type: exec
            command: sh -c 'exit 3'
          - name: where
            description: a script in a directory
            type: exec
            dir: "{home}"
            shell: /bin/sh
            script: |
              pwd
              echo "try=$BUILDER_TRY {{{{ .Arguments.word | upper }}}}"
            arguments:
              - name: word
                description: w
          - name: missing
            description: no such program
            type: exec
            command: /nonexistent/prog
        """)
    assert ccm("tool", "fail", cwd=home, env=env_of(home)).returncode == 3
    r = ccm("tool", "where", "abc", cwd=home, env=env_of(home))
    assert (r.returncode, r.stdout) == (0, f"{home}\ntry=1 ABC\n"), r.stderr
    r = ccm("tool", "missing", cwd=home, env=env_of(home))
    assert r.returncode == 1
    assert r.stderr.startswith('ccm: error: execution failed: exec: "/nonexistent/prog": executable file not found')
    r = ccm("tool", "fail", cwd=home, env=env_of(home, BUILDER_DRY_RUN="1"))
    assert r.returncode == 1
    assert r.stderr == "would run: sh -c 'exit 3'\nccm: error: execution failed: dry run mode\n"


def test_ccm_manifest_applies_in_process_with_arguments_and_flags_as_data(home):
    target = home / "out.txt"
    manifest = home / "site.yaml"
    manifest.write_text(textwrap.dedent(f"""\
        data:
          version: "0"
          colour: none
        ccm:
          pre_message: "deploying {{{{ lookup('data.version') }}}}"
          resources:
            - file:
                - {target}:
                    ensure: present
                    owner: root
                    group: root
                    mode: "0644"
                    content: "version={{{{ lookup('data.version') }}}} colour={{{{ lookup('data.colour') }}}} \\
        force={{{{ lookup('data.force') }}}}\\n"
        """))
    write_plugin(home, "site", """\
        name: site
        description: the site
        commands:
          - name: site
            description: Apply the site manifest
            type: ccm_manifest
            manifest: "{{ AppDir }}/../../../../site.yaml"
            render_summary: true
            arguments:
              - name: version
                description: version
                required: true
            flags:
              - name: force
                description: force
                bool: true
        """)
    r = ccm("site", "--help", cwd=home, env=env_of(home))
    assert "--noop" in r.stdout and "version" in r.stdout
    noop = ccm("site", "2.0", "--noop", cwd=home, env=env_of(home))
    assert noop.returncode == 0 and not target.exists(), noop.stderr
    # in this process: no `ccm` on PATH to start a second one
    r = ccm("site", "2.0", "--force", cwd=home, env=env_of(home, PATH="/usr/bin:/bin"))
    assert r.returncode == 0, r.stderr
    assert target.read_text() == "version=2.0 colour=none force=true\n"
    assert r.stdout.startswith("deploying 2.0\n")
    assert "Manifest Run Summary" in r.stdout and "Changed Resources: 1" in r.stdout


def test_ccm_manifest_exit_code_follows_ccm_apply(home):
    manifest = home / "bad.yaml"
    manifest.write_text("ccm:\n  resources:\n    - exec:\n        name: /bin/false\n")
    write_plugin(home, "bad", f"""\
        name: bad
        description: fails
        commands:
          - name: bad
            description: a failing manifest
            type: ccm_manifest
            manifest: {manifest}
        """)
    r = ccm("bad", cwd=home, env=env_of(home))
    assert r.returncode == 1 and "exec#/bin/false failed" in r.stdout


def test_cheats(home):
    write_plugin(home, "deploy", DEPLOY)
    assert ccm("cheat", cwd=home, env=env_of(home)).stdout == "Available Cheats:\n\n    deploy\n    webdeploy\n"
    assert ccm("cheat", "webdeploy", cwd=home, env=env_of(home)).stdout == "# ccm deploy web VERSION --env staging\n"
    assert ccm("cheat", "deploy", cwd=home, env=env_of(home)).stdout == "# deploy the web tier\nccm deploy web 1.2\n"
    assert "Use 'ccm cheat' to access cheat sheet style help" in ccm("deploy", "--help", cwd=home,
                                                                     env=env_of(home)).stdout


# --- as root: whose files are read ----------------------------------------------------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="ownership rules apply to root")


@needs_root
@pytest.mark.parametrize("change,reason", [
    (lambda p: p.chmod(0o664), "skipped: it is writable by group or others"),
    (lambda p: os.chown(p, 65534, 0), "skipped: it is owned by uid 65534, not root"),
    (lambda p: p.parent.chmod(0o777), "a directory on the way is writable by group or others"),
    (lambda p: os.chown(p.parent, 65534, 0), "a directory on the way is owned by uid 65534, not root"),
])
def test_as_root_only_root_owned_unwritable_files_are_read(home, change, reason):
    mark = home / "ran"
    path = write_plugin(home, "own", CONFIRM.replace("{MARK}", str(mark)).replace("name: danger", "name: own"))
    change(path)
    r = ccm("own", "wipe", "--no-prompt", cwd=home, env=env_of(home))
    assert not mark.exists()
    assert r.returncode == 1 and "Traceback" not in r.stderr
    listed = ccm("--help", cwd=home, env=env_of(home))
    assert listed.returncode == 0 and reason in listed.stderr and len(listed.stderr.splitlines()) == 1


@needs_root
def test_as_root_a_symlinked_plugin_file_is_not_followed(home):
    real = home / "elsewhere.yaml"
    real.write_text("name: link\n")
    os.symlink(real, plugin_dir(home) / "link-plugin.yaml")
    r = ccm("link", cwd=home, env=env_of(home))
    assert r.returncode == 1 and "it is a symbolic link" in r.stderr


# --- cost: built-in commands never look ------------------------------------------------------------

def test_built_in_commands_do_not_read_plugin_directories(home):
    write_plugin(home, "deploy", DEPLOY)
    code = ("import sys; from ccm.cli.main import main; rc = main(['session', 'new', '--directory', 's']);"
            "print(rc, 'ccm.cli.plugins' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], cwd=str(home), env=env_of(home), capture_output=True,
                       text=True, timeout=60)
    assert r.stdout.splitlines()[-1] == "0 False", r.stderr


def test_the_readme_example_plugin_loads_and_renders(home):
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = readme[readme.index("### CLI plugins"):]
    block = section[section.index("```yaml\n") + len("```yaml\n"):section.index("\n```\n")]
    (plugin_dir(home) / "deploy-plugin.yaml").write_text(block)
    help_text = ccm("deploy", "--help", cwd=home, env=env_of(home))
    assert help_text.returncode == 0, help_text.stderr
    assert "deploy web [<flags>] <version>" in help_text.stdout and "deploy app [<flags>] <version>" in help_text.stdout
    r = ccm("deploy", "web", "1.2.3", "--env", "staging", "--no-prompt", cwd=home,
            env=env_of(home, BUILDER_DRY_RUN="1"))
    assert r.stdout == ">> deploying 1.2.3\n"
    assert r.stderr == ("would run: ccm apply /srv/ccm/web.yaml --fact app_version=1.2.3\n"
                        "environment: DEPLOY_ENV=staging\nccm: error: execution failed: dry run mode\n")
    bad = ccm("deploy", "web", "1.2.3;reboot", "--no-prompt", cwd=home, env=env_of(home, BUILDER_DRY_RUN="1"))
    assert bad.returncode == 1 and "did not pass the validation 'isShellSafe(value)'" in bad.stderr


@pytest.mark.parametrize("flags,problem", [
    ("      - {name: help, description: h}\n", "flag name 'help' cannot be used"),
    ("      - {name: 'a b', description: h}\n", "flag name 'a b' cannot be used"),
    ("      - {name: x, description: h, short: h}\n", "short flag -h is the help flag"),
    ("      - {name: x, description: h, short: q}\n      - {name: y, description: h, short: q}\n",
     "flag 'q' is defined twice"),
    ("      - {name: x, description: h, bool: true, default: true}\n      - {name: no-x, description: h}\n",
     "flag 'no-x' is defined twice"),
])
def test_flags_argparse_could_not_express_are_refused_with_one_line(home, flags, problem):
    path = write_plugin(home, "odd", "name: odd\ndescription: d\ncommands:\n  - name: run\n    description: d\n"
                                     "    type: exec\n    command: echo\n    flags:\n" + flags)
    r = ccm("odd", "run", cwd=home, env=env_of(home))
    assert r.returncode == 1 and r.stderr.startswith(f"ccm: error: plugin {path}: ") and problem in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_a_boolean_flag_from_the_environment_must_be_true_or_false(home):
    write_plugin(home, "envb", "name: envb\ndescription: d\ncommands:\n  - name: run\n    description: d\n"
                               "    type: exec\n    command: echo {{ .Flags.x }}\n    flags:\n"
                               "      - {name: x, description: x, bool: true, env: CCM_TEST_X}\n")
    assert ccm("envb", "run", cwd=home, env=env_of(home, CCM_TEST_X="true")).stdout == "true\n"
    r = ccm("envb", "run", cwd=home, env=env_of(home, CCM_TEST_X="maybe"))
    assert (r.returncode, r.stderr) == (1, "error: flag --x: $CCM_TEST_X is 'maybe', not true or false\n")


def test_a_user_may_symlink_a_plugin_file():
    """Only root refuses symlinked plugin files; ``nobody`` runs one through its link."""
    import pwd
    import shutil
    import tempfile

    if os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"):
        pytest.skip("needs root (to run as nobody) and /usr/bin/python3")
    nobody = pwd.getpwnam("nobody")
    base = tempfile.mkdtemp(prefix="ccm-plugin-")   # under /tmp, where nobody may go
    try:
        plugins = os.path.join(base, "xdg", "choria", "ccm", "plugins")
        os.makedirs(plugins)
        real = os.path.join(base, "real.yaml")
        with open(real, "w") as fh:
            fh.write("name: link\ndescription: d\ncommands:\n  - name: run\n    description: d\n"
                     "    type: exec\n    command: echo linked\n")
        os.symlink(real, os.path.join(plugins, "link-plugin.yaml"))
        for dirpath, dirs, files in os.walk(base):
            for name in dirs + files + [""]:
                os.lchown(os.path.join(dirpath, name), nobody.pw_uid, nobody.pw_gid)
        code = ("import os, sys; os.setgid(%d); os.setuid(%d); sys.path.insert(0, %r);"
                "from ccm.cli.main import main; sys.exit(main(['link', 'run']))"
                % (nobody.pw_gid, nobody.pw_uid, ROOT))
        env = {"PATH": "/usr/bin:/bin", "HOME": base, "XDG_CONFIG_HOME": os.path.join(base, "xdg")}
        r = subprocess.run(["/usr/bin/python3", "-c", code], env=env, capture_output=True, text=True, timeout=60,
                           cwd="/")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert (r.returncode, r.stdout) == (0, "linked\n"), r.stderr


def test_app_builder_template_functions(home):
    write_plugin(home, "req", """\
        name: req
        description: d
        commands:
          - name: run
            description: d
            type: exec
            command: >-
              echo {{ require .Config.Password "Password not set in the configuration" }}
              {{ read_file "word.txt" | trim }} {{ env "HOME" }} {{ UserWorkingDir }} {{ AppDir }}
              {{ default .Flags.colour "blue" }} {{ list 1 2 | toJson | squote }}
            flags:
              - {name: colour, description: c}
        """)
    (home / "word.txt").write_text("bird\n")
    r = ccm("req", "run", cwd=home, env=env_of(home))
    assert r.returncode == 1
    assert r.stderr.startswith("ccm: error: req run: template error: template: command:1:")
    assert r.stderr.endswith("error calling require: Password not set in the configuration\n")
    (plugin_dir(home) / "req-cfg.yaml").write_text("Password: pw\n")
    r = ccm("req", "run", "--colour", "red", cwd=home, env=env_of(home))
    assert (r.returncode, r.stdout) == (0, f"pw bird {home} {home} {plugin_dir(home)} red [1,2]\n"), r.stderr
    assert ccm("req", "run", cwd=home, env=env_of(home)).stdout.endswith(" blue [1,2]\n")


def test_ccm_manifest_run_lock_as_ccm_apply(home):
    """Held by another run: skipped with ccm apply's lock exit code; a noop neither needs nor takes it."""
    from ccm.locks import EXIT_LOCKED, GlobalLock

    target = home / "out.txt"
    manifest = home / "site.yaml"
    manifest.write_text(f"ccm:\n  resources:\n    - file:\n        name: {target}\n        ensure: present\n"
                        "        owner: root\n        group: root\n        mode: '0644'\n        content: x\n")
    write_plugin(home, "site", f"""\
        name: site
        description: the site
        commands:
          - name: site
            description: Apply the site manifest
            type: ccm_manifest
            manifest: {manifest}
        """)
    with GlobalLock("run", directory=env_of(home)["CCM_LOCK_DIR"]).hold("a cron run"):
        r = ccm("site", cwd=home, env=env_of(home))
        assert r.returncode == EXIT_LOCKED and "holds the run lock" in r.stderr and not target.exists(), r.stderr
        r = ccm("site", "--noop", cwd=home, env=env_of(home))
        assert r.returncode == 0 and not target.exists(), r.stderr
