"""``TextInt``: an integer read from YAML that remembers how it was written.

Here, apart from ``ccm.yamlio`` (which makes them), so code that only carries such values
(``ccm.apply.plancache``) need not import PyYAML.
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any


class TextInt(int):
    """An int that remembers the YAML text it was written as."""

    text: str

    def __new__(cls, value: int, text: str) -> "TextInt":
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    def __reduce__(self) -> Any:  # copy/deepcopy/pickle keep the text
        return (TextInt, (int(self), self.text))
