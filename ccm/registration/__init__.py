"""Service registration over NATS JetStream, wire-compatible with upstream CCM.

What: ``entry`` (the entry, its validation, TTL, JSON body), ``subjects`` (instance id,
publish and filter subjects), ``filesd`` (the entry list templates see, and
``PrometheusFileSD()``), ``publish`` (the gate, ``nats`` and ``jetstream`` publishers),
``stream`` (init, lookup, watch, remove). Guarantees: ``entry``, ``subjects`` and
``filesd`` are pure (no ``nats`` import); the network parts use the manager's one
``ccm.nats.connection.Connection``.
"""
from __future__ import annotations

SUBJECT_PREFIX = "choria.ccm.registration.v1"
STREAM_SUBJECTS = [f"{SUBJECT_PREFIX}.>"]
DEFAULT_STREAM = "REGISTRATION"
