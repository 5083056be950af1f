"""Contracts shared by every layer.

Guarantees: no I/O (no clock, files, processes, environment or randomness: a new event
or state gets its time and id from its maker, ``ccm.clock``); it imports a short list of
pure standard-library modules, the typing guard and Go's timestamp text
(``ccm.gocompat.rfc3339``), nothing else of ccm (``tests/test_architecture.py``).
Not: an implementation of anything; providers, resource types, the manager and the
CLI all program against what is defined here.
"""
