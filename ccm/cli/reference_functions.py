"""``ccm doc functions``: what templates and expressions may call, from the engines' tables.

What: ``function_sections()`` documents ccm's own template functions (``CCM_FUNCTIONS`` of
``ccm.templates.environment`` and the NATS ones of ``ccm.nats.functions``) with a
signature, a description and an example each, then lists by name every builtin of the
expression language (``ccm.expr.BUILTIN_FUNCTIONS``), of the Go template engine used by
``scaffold`` with ``engine: go`` and by the CLI plugins (``ccm.templates.gotmpl``), and
of Jet (``ccm.templates.jet``).

Guarantees: the lists are read from the tables the engines dispatch on, so a function
added there is listed here; a ccm function without an entry in ``CCM_DOCS`` fails the
tests. Not: the semantics of expr-lang, Sprig or Jet (their own documentation).
"""
from __future__ import annotations


from ccm.cli.reference import Entry, Section
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, List, Tuple

# name -> (signature, description, example)
CCM_DOCS: Dict[str, Tuple[str, str, str]] = {
    "lookup": ("lookup(path[, default])",
               "A value from facts, data and environ by gjson path (data.pkg, facts.host.info.os, "
               "data.users.#.name); a missing path is an error unless a default is given",
               "content: \"port={{ lookup('data.port', 80) }}\""),
    "readFile": ("readFile(path)", "The contents of a file; a relative path is read from the manifest's directory",
                 "content: \"{{ readFile('files/motd') }}\""),
    "file": ("file(path)", "Another name of readFile", "content: \"{{ file('files/motd') }}\""),
    "template": ("template(text)",
                 "Render text as a template, keeping its type; a name ending .templ is read from that file, "
                 "one ending .jet is rendered as Jet; any other name of an existing file is refused", "content: \"{{ template('files/app.conf.templ') }}\""),
    "jet": ("jet(body[, left, right])",
            "Render a Jet template (a body ending .jet is read from that file); delimiters [[ ]] unless given",
            "content: \"{{ jet('files/app.conf.jet') }}\""),
    "kvGet": ("kvGet(bucket, key)", "The latest value of key in a JetStream key-value bucket (needs NATS; "
              "seed it with ccm kv put)", "content: \"{{ kvGet('CONFIG', 'motd') }}\""),
    "registrations": ("registrations(cluster, protocol, service, address)",
                      "Registered service entries (* or \"\" match anything), with Cluster, Service, Protocol, "
                      "Address, Port, Priority, Annotations, TTL and PrometheusFileSD()",
                      "content: \"{{ registrations('prod', 'http', 'web', '*').PrometheusFileSD() }}\""),
}


def ccm_function_names() -> List[str]:
    from ccm.nats.functions import NAMES
    from ccm.templates.environment import CCM_FUNCTIONS

    return sorted(CCM_FUNCTIONS | NAMES)


def expr_names() -> List[str]:
    from ccm.expr import BUILTIN_FUNCTIONS

    return sorted(BUILTIN_FUNCTIONS)


def go_template_names() -> List[str]:
    from ccm.templates.gotmpl.funcs import BUILTIN_NAMES
    from ccm.templates.gotmpl.sprig import SPRIG

    return sorted(BUILTIN_NAMES | set(SPRIG))


def jet_names() -> List[str]:
    from ccm.templates.jet.builtins import BUILTIN_NAMES

    return sorted(BUILTIN_NAMES)


def _names(names: List[str]) -> str:
    return " ".join(names)


def function_sections() -> List[Section]:
    entries = [Entry(CCM_DOCS[n][0], "function", CCM_DOCS[n][1], example=CCM_DOCS[n][2])
               for n in ccm_function_names()]
    return [
        Section("functions", "Templates are {{ expression }} or ${ expression } inside a property; "
                "the expression language is expr-lang's (https://expr-lang.org). These functions are ccm's own:",
                entries),
        Section("expression builtins", "Also callable in every expression, control if/unless and "
                "@validate (see expr-lang's documentation): " + _names(expr_names())),
        Section("go templates", "scaffold with engine: go and the CLI plugins render Go text/template with "
                "these functions (Go's builtins and Sprig's): " + _names(go_template_names())),
        Section("jet templates", "jet(), template('x.jet') and scaffold with engine: jet (the default) render Jet "
                "with these builtins, ccm's functions and Facts/Data/Environ (facts, data, environ): "
                + _names(jet_names())),
    ]
