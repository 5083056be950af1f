"""The expression language used in ``{{ }}``/``${ }`` templates, ``control``
conditions and ``@validate`` annotations: a subset of expr-lang.

What: ``compile_expr(source)`` parses once into a cached ``Program`` (compiled
to a Python function); ``Program.run(env)`` evaluates it against a mapping of
variables and functions. Guarantees: standard library only, no I/O; every
failure is an ``ExprError`` (a ``TemplateError``) carrying the expression and,
for compile errors, a 1-based column. Not: a sandbox for untrusted Python
objects (method calls reach public attributes of returned objects).
"""
from __future__ import annotations

from ccm.expr.compiler import BUILTIN_FUNCTIONS, SUGGESTED_FUNCTIONS, Program, compile_expr, evaluate
from ccm.expr.errors import ExprError

__all__ = ["BUILTIN_FUNCTIONS", "SUGGESTED_FUNCTIONS", "ExprError", "Program", "compile_expr", "evaluate"]
