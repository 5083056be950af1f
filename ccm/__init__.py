"""ccm: the Choria Configuration Manager, re-made in Python.

This module holds the version only and imports nothing: ``ccm --version`` and
``ccm --help`` must stay cheap on every cron run.
"""

__version__ = "0.1.0"
