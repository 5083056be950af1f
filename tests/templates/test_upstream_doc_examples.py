"""Upstream CCM's documentation examples of Go-engine scaffolds and of expressions, run
unchanged (choria-io/ccm ``docs/content/resources/scaffold.md``, ``registration/_index.md``,
``templates/_index.md``, ``cli/_index.md``, ``resources/_index.md``, ``resources/file.md``).

Scaffolds render through the real scaffold resource into real directories."""
from __future__ import annotations

import datetime

import pytest

from ccm.registration.entry import Entry
from ccm.registration.filesd import Entries
from ccm.templates import make_environment, render_string
from tests import kit
from tests.kit import run
from tests.resources.scaffold.test_scaffold import tree


def scaffold(m, src, target, **kw):
    raw = {"name": str(target), "ensure": "present", "source": str(src), "engine": "go"}
    raw.update(kw)
    ev = run(m, "scaffold", raw)
    assert not ev.failed, ev.errors
    return ev


FACTS = {"hostname": "web01", "host": {"info": {"os": "linux", "platformFamily": "debian"}}}


def test_scaffold_md_go_template_syntax_partials_write_and_sprig(tmp_path):
    src, target = tmp_path / "src", tmp_path / "target"
    tree(src, {
        # "Template syntax", Go engine
        "config.yaml": "# config.yaml\nhostname: {{ .facts.hostname }}\nenvironment: {{ .data.environment }}\n"
                       "workers: {{ .data.worker_count }}\n",
        # "Partials", Go
        "server.conf": '{{ render "_partials/header.conf" . }}\n\nserver {\n    listen {{ .data.port }};\n}\n',
        "_partials/header.conf": "# managed on {{ .facts.hostname }}",
        # "Built-in functions", Go
        "db.conf": '{{ render "_partials/database.conf" . }}',
        "_partials/database.conf": "db_port = {{ .data.port }}",
        "main.txt": '{{ write "extra.conf" "generated content" }}main',
        # "Sprig functions"
        "sprig.yaml": "# Go engine example with Sprig functions\nhostname: {{ .facts.hostname | upper }}\n"
                      'packages: {{ join ", " .data.packages }}\ngenerated: {{ now | date "2006-01-02" }}\n',
    })
    m = kit.manager(facts=FACTS, data={"environment": "production", "worker_count": 4, "port": 8080,
                                        "packages": ["nginx", "curl"]})
    scaffold(m, src, target)
    read = lambda rel: (target / rel).read_text()   # noqa: E731
    assert read("config.yaml") == "# config.yaml\nhostname: web01\nenvironment: production\nworkers: 4\n"
    assert read("server.conf") == "# managed on web01\n\nserver {\n    listen 8080;\n}\n"
    assert read("db.conf") == "db_port = 8080"
    assert read("main.txt") == "main" and read("extra.conf") == "generated content"
    today = datetime.datetime.now().astimezone().strftime("%Y-%m-%d")
    assert read("sprig.yaml") == f"# Go engine example with Sprig functions\nhostname: WEB01\n" \
                                 f"packages: nginx, curl\ngenerated: {today}\n"
    assert not (target / "_partials").exists()


def test_scaffold_md_custom_delimiters(tmp_path):
    src, target = tmp_path / "src", tmp_path / "target"
    tree(src, {"svc.conf": "name=<< .data.name | upper >> {{ left alone }}"})
    scaffold(kit.manager(data={"name": "myservice"}), src, target, left_delimiter="<<", right_delimiter=">>")
    assert (target / "svc.conf").read_text() == "name=MYSERVICE {{ left alone }}"


def test_registration_md_go_templates(tmp_path):
    entries = Entries([
        Entry("production", "web", "http", "10.0.0.1", 80, 10, {"prometheus.io/scrape": "true"}),
        Entry("production", "web", "http", "10.0.0.2", 8080, 20, {"prometheus.io/scrape": "true"}),
    ])

    def registrations(cluster, protocol, service, address):
        assert (cluster, protocol, service, address) == ("production", "http", "web", "*")
        return entries

    src, target = tmp_path / "src", tmp_path / "target"
    tree(src, {
        "backends.cfg": '{{ range $entry := registrations "production" "http" "web" "*" }}\n'
                        "  server {{ $entry.Address }}:{{ $entry.Port }}\n{{ end }}",
        "sd.json": '{{ $r := registrations "production" "http" "web" "*" }}{{ $r.PrometheusFileSD }}',
    })
    scaffold(kit.manager(template_functions={"registrations": registrations}), src, target)
    assert (target / "backends.cfg").read_text() == "\n  server 10.0.0.1:80\n\n  server 10.0.0.2:8080\n"
    assert (target / "sd.json").read_text() == entries.PrometheusFileSD()
    assert '"10.0.0.2:8080"' in (target / "sd.json").read_text()


ENV = make_environment(
    facts={"host": {"info": {"platformFamily": "rhel", "os": "linux", "virtualizationSystem": "kvm"}},
           "fqdn": "web01.example.com"},
    data={"package_name": "httpd", "service_name": "httpd", "port": 8080, "my_data_key": "v"},
    environ={"HOME": "/root", "MY_VAR": "set"}, working_dir="/tmp")


@pytest.mark.parametrize("text,want", [
    # templates/_index.md
    ("{{ lookup('facts.host.info.platformFamily') }}", "rhel"),
    ("${ lookup('facts.host.info.platformFamily') }", "rhel"),
    ('{{ lookup("data.package_name", "httpd") }}', "httpd"),
    ('${ lookup("data.package_name", "httpd") }', "httpd"),
    ("${ Facts.host.info.platformFamily }", "rhel"),
    ('"${ Environ.HOME }"', '"/root"'),
    ("${ lookup('environ.MY_VAR', 'default') }", "set"),
    ("${ lookup('environ.NOT_SET', 'default') }", "default"),
    ("os:${ lookup('facts.host.info.platformFamily') }", "os:rhel"),
    # _index.md, cli/_index.md
    ("{{ Data.package_name }}", "httpd"),
    ("${ Data.service_name }", "httpd"),
    ('{{ lookup("data.my_data_key") }}', "v"),
    ('{{ lookup("facts.host.info.platformFamily") == "rhel" ? "httpd" : "apache2" }}', "httpd"),
    # hiera/_index.md
    ("fqdn:${ lookup('facts.fqdn') }", "fqdn:web01.example.com"),
    # resources/_index.md (control expressions)
    ('{{ lookup("facts.host.info.os") == "linux" }}', "true"),
    ('{{ lookup("facts.host.info.virtualizationSystem") == "docker" }}', "false"),
])
def test_expression_examples(text: str, want: str) -> None:
    assert render_string(text, ENV) == want


def test_file_md_now_example() -> None:
    out = render_string("Managed by CCM {{ now() }}", ENV)
    year = str(datetime.datetime.now().year)
    assert out.startswith("Managed by CCM " + year + "-") and out.count(":") == 2
