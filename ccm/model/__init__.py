"""Contracts shared by every layer.

Guarantees: standard library only, no I/O, imports nothing else of ccm.
Not: an implementation of anything; providers, resource types, the manager and the
CLI all program against what is defined here.
"""
