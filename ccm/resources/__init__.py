"""Resource types. ``BUILTIN_TYPES`` is the only list of types in ccm: each entry names
a module exposing ``TYPE`` (a ``ccm.registry.TypeSpec``), imported on first use.
"""

BUILTIN_TYPES = {
    "package": "ccm.resources.package",
    "service": "ccm.resources.service",
    "file": "ccm.resources.file",
    "exec": "ccm.resources.exec",
    "archive": "ccm.resources.archive",
    "scaffold": "ccm.resources.scaffold",
    "apply": "ccm.resources.apply",
}
