"""Command-line interface: argument parsing and output only.

Commands build a manager (``ccm.manager``) and hand it work; they never import a
provider or the registry directly.
"""
