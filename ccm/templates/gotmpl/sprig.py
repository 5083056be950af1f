"""The Sprig function library of the scaffold Go engine: ONE table, name -> ``GoFunc``.

The rows live with their Sprig documentation section (``sprig_strings``, ``sprig_case``,
``sprig_convert``, ``sprig_math``, ``sprig_lists``, ``sprig_defaults``, ``sprig_dates``,
``sprig_misc``, ``sprig_crypto``);
each row gives the implementation, its Go parameter types and its ``must`` variant. Every
function of Sprig v3.3's ``genericMap`` is here, plus Helm's ``required``. Functions the
standard library cannot do (bcrypt, key and certificate generation, AES) and
``getHostByName`` are present but refuse with a message naming the function.
"""
from __future__ import annotations


from ccm.templates.gotmpl import sprig_case, sprig_convert, sprig_crypto, sprig_dates, sprig_defaults, sprig_lists, \
    sprig_math, sprig_misc, sprig_strings
from ccm.templates.gotmpl.gofunc import GoFunc, table
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict

__all__ = ["SPRIG", "ROWS"]

ROWS = (sprig_strings.ROWS + sprig_case.ROWS + sprig_convert.ROWS + sprig_math.ROWS + sprig_lists.ROWS
        + sprig_defaults.ROWS + sprig_dates.ROWS + sprig_misc.ROWS + sprig_crypto.ROWS)

SPRIG: Dict[str, GoFunc] = table(ROWS)
