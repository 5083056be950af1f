"""ccm.pyz's boot code: what runs before the application, built into the zip by build_zipapp.py.

Not part of the ``ccm`` package (not installed with it; ``ccm`` imports nothing of it). Each
module goes to the top of the zip under its own name:

- ``stub.py`` -> ``_ccm_stub.py``, the entry: the warm start (trust rule, complete tree,
  import bundle) and the hand-over to ``ccm.__main__.main()``;
- ``boot.py`` -> ``_ccm_boot.py``, everything else: the interpreter guard's message, the
  choice of extraction root, unpacking, pruning, then shiv's bootstrap;
- ``bundle.py`` -> ``_ccm_bundle.py``, the import bundle's writer, loaded at exit only when
  a run imported a module its bundle lacks.

``stub.py`` and ``boot.py`` stay parseable by Python 2.7 and 3.6, so the guard can refuse
those in one line. From the source tree (tests) they are ``pyzboot.stub`` and ``pyzboot.boot``.
"""
