"""The one error type of the expression language."""
from __future__ import annotations


from ccm.model.errors import TemplateError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Optional


class ExprError(TemplateError):
    """An expression failed to compile or to run.

    ``expr`` is the expression source, ``column`` the 1-based position of the
    problem (compile errors; ``None`` when unknown), ``message`` the bare reason.
    Compile errors print as ``expr compile error for '<expr>': <message> (column N)``;
    run-time errors print as the bare message (callers add the field name).
    """

    def __init__(self, message: str, *, expr: Optional[str] = None, column: Optional[int] = None,
                 compile_error: bool = False) -> None:
        self.message = message
        self.expr = expr
        self.column = column
        self.compile_error = compile_error
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.compile_error:
            return self.message
        where = f" (column {self.column})" if self.column is not None else ""
        return f"expr compile error for '{self.expr}': {self.message}{where}"
