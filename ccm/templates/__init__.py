"""Templates: ``{{ expr }}`` / ``${ expr }`` expressions inside strings.

What: scanning (``scan``), the three rendering modes (string, typed, match),
Go ``%v`` text for values (``go_sprint``), GJSON paths for ``lookup()``, and the
environment builders. Guarantees: no I/O except the ``readFile``/``file``/
``template``/``jet`` functions of ``make_environment``. Not: the Jet or Go
template engines (``ccm.templates.jet``, ``ccm.templates.gotmpl``), which are
imported only when used.
"""
from __future__ import annotations

from ccm.gocompat.fmt import go_sprint
from ccm.templates.environment import CCM_FUNCTIONS, Environ, hiera_environment, make_environment
from ccm.templates.scan import (
    check_template,
    functions_called,
    has_expressions,
    render_match,
    render_string,
    render_typed,
    render_value,
)

__all__ = [
    "CCM_FUNCTIONS", "Environ", "check_template", "functions_called", "go_sprint", "has_expressions",
    "hiera_environment", "make_environment", "render_match", "render_string", "render_typed", "render_value",
]
