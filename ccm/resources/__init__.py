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

# What the agent's drift watch (``ccm.agent.watch``) watches of each type: a property
# naming a managed path ("name", "creates"), "name/*" for that directory's entries too,
# PACKAGE_DB (the package database) or SERVICE_POLL (polled every ``service_poll``).
PACKAGE_DB = "package database"
SERVICE_POLL = "service poll"
WATCHED = {
    "file": ("name",),
    "scaffold": ("name", "name/*"),
    "archive": ("creates",),
    "exec": ("creates",),
    "package": (PACKAGE_DB,),
    "service": (SERVICE_POLL,),
}
