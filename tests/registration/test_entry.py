"""Registration entries, ids, subjects and file-SD: pure, no server."""
from __future__ import annotations

import json

import pytest

from ccm.model.errors import ValidationError
from ccm.registration.entry import NEVER, Entry, from_json, from_mapping, parse_ttl, ttl_text
from ccm.registration.filesd import Entries, prometheus_file_sd
from ccm.registration.subjects import (entry_from_subject, filter_subject, fnv1a64, instance_id, parse_subject,
                                       publish_subject)

# The spec's worked examples (registration.md §InstanceId) are the test vectors.
VECTORS = [
    ("production", "web", "http", "10.0.0.5", 8080, "d097567f5aa3133c",
     "choria.ccm.registration.v1.production.http.web.10_0_0_5.d097567f5aa3133c"),
    ("dev", "prometheus", "tcp", "10.0.0.1", 9090, "d78ec9f48f18d19f",
     "choria.ccm.registration.v1.dev.tcp.prometheus.10_0_0_1.d78ec9f48f18d19f"),
    ("c1", "svc", "proto", "192.168.1.10", 1, "21585011d9b5b89f",
     "choria.ccm.registration.v1.c1.proto.svc.192_168_1_10.21585011d9b5b89f"),
    ("dev", "db", "tcp", "::1", 5432, "7e9c4a879bdd2158", "choria.ccm.registration.v1.dev.tcp.db.::1.7e9c4a879bdd2158"),
    ("dev", "web", "http", "10.0.0.5", None, "914ee1bbb4417cfe",
     "choria.ccm.registration.v1.dev.http.web.10_0_0_5.914ee1bbb4417cfe"),
]


def test_fnv_reference_values():
    assert format(fnv1a64(b"a"), "016x") == "af63dc4c8601ec8c"
    assert format(fnv1a64(b"foobar"), "016x") == "85944171f73967e8"
    assert format(fnv1a64(b""), "016x") == "cbf29ce484222325"


@pytest.mark.parametrize("cluster,service,protocol,address,port,iid,subject", VECTORS)
def test_instance_id_and_subject_match_upstream(cluster, service, protocol, address, port, iid, subject):
    e = Entry(cluster=cluster, service=service, protocol=protocol, address=address, port=port, priority=1)
    assert instance_id(e) == iid
    assert publish_subject(e) == subject
    assert parse_subject(subject) == (cluster, protocol, service, address)


def test_filter_subjects():
    assert filter_subject() == "choria.ccm.registration.v1.*.*.*.*.*"
    assert filter_subject("prod", "", "web", "10.0.0.1") == "choria.ccm.registration.v1.prod.*.web.10_0_0_1.*"
    assert parse_subject("a.b.c") == ("", "", "", "")
    assert entry_from_subject(VECTORS[0][6]).address == "10.0.0.5"


def test_body_is_upstreams_compact_json_in_field_order():
    e = from_mapping({"cluster": "dev", "service": "web", "protocol": "http", "address": "10.0.0.5",
                      "port": 8080, "priority": 10, "annotations": {"v": "<1>"}, "ttl": "10m"})
    assert e.to_json() == (b'{"cluster":"dev","service":"web","protocol":"http","address":"10.0.0.5","port":8080,'
                           b'"priority":10,"annotations":{"v":"\\u003c1\\u003e"},"ttl":"10m0s"}')
    bare = from_mapping({"cluster": "dev", "service": "web", "protocol": "http", "address": "10.0.0.5", "priority": 1})
    assert bare.to_json() == b'{"cluster":"dev","service":"web","protocol":"http","address":"10.0.0.5","port":null,"priority":1}'
    back = from_json(e.to_json())
    assert back == e


def test_ttl_forms():
    assert parse_ttl("never") == NEVER and ttl_text(NEVER) == "never"
    assert ttl_text(parse_ttl("30s")) == "30s"
    assert ttl_text(parse_ttl("1h30m")) == "1h30m0s"
    assert ttl_text(parse_ttl("2d")) == "48h0m0s"
    assert parse_ttl(None) is None and parse_ttl(30_000_000_000) == 30_000_000_000
    with pytest.raises(ValidationError, match="registration is invalid: ttl"):
        parse_ttl("soon")


BASE = {"cluster": "dev", "service": "web", "protocol": "http", "address": "10.0.0.5", "port": 80, "priority": 1}


@pytest.mark.parametrize("change,message", [
    ({"cluster": ""}, "cluster is required"),
    ({"cluster": "1x"}, 'cluster "1x" is not a valid name'),
    ({"protocol": None}, "protocol is required"),
    ({"protocol": "a.b"}, 'protocol "a.b" is not a valid name'),
    ({"service": ""}, "service is required"),
    ({"service": "we b"}, 'service "we b" is not a valid name'),
    ({"address": ""}, "address is required"),
    ({"address": "web.example.net"}, 'address "web.example.net" is not a valid Address address'),
    ({"port": "8080"}, 'port must be an integer number, not string ("8080")'),
    ({"port": 8080.5}, "port must be an integer number, not float (8080.5)"),
    ({"port": True}, "port must be an integer number, not boolean"),
    ({"port": 0}, "port '0' must be between 1 and 65535"),
    ({"port": 65536}, "port '65536' must be between 1 and 65535"),
    ({"priority": 256}, "priority '256' must be between 1 and 255"),
    ({"priority": None}, "priority '0' must be between 1 and 255"),
    ({"colour": "red"}, "unknown key 'colour'"),
])
def test_validation_messages_in_upstream_order(change, message):
    raw = dict(BASE, **change)
    raw = {k: v for k, v in raw.items()}
    with pytest.raises(ValidationError) as info:
        from_mapping(raw)
    assert str(info.value).startswith("registration is invalid: ")
    assert message in str(info.value)


def test_ipv6_entries_and_file_sd_rules():
    entries = Entries([
        Entry("dev", "prometheus", "tcp", "10.0.0.1", 8080, 1),
        Entry("dev", "prometheus", "tcp", "10.0.0.2", 9090, 1, {"team": "ops", "__hidden": "x", "prometheus.io/scrape": "true"}),
        Entry("dev", "web", "http", "10.0.0.3", 80, 1),                                 # not opted in
        Entry("dev", "web", "http", "::1", 81, 1, {"prometheus.io/scrape": "true", "team": "web"}),
        Entry("dev", "prometheus", "tcp", "10.0.0.4", 9100, 1, {"prometheus.io/scrape": "false"}),  # opted out
        Entry("dev", "prometheus", "tcp", "10.0.0.5", None, 1),                         # no port
    ])
    doc = json.loads(entries.PrometheusFileSD())
    assert doc == [
        {"labels": {"cluster": "dev", "protocol": "tcp", "service": "prometheus"},
         "targets": ["10.0.0.1:8080", "10.0.0.2:9090"]},
        {"labels": {"cluster": "dev", "protocol": "http", "service": "web", "team": "web"}, "targets": ["[::1]:81"]},
    ]
    assert entries.PrometheusFileSD().startswith('[\n  {\n    "labels": {\n      "cluster": "dev",')
    assert prometheus_file_sd([]) == "[]"


def test_child_managers_share_the_parents_nats_connection():
    from ccm.manager import Manager

    parent = Manager(facts={}, nats_context="CCM")
    kid = parent.child(noop=True)
    assert kid.nats_connection() is parent.nats_connection()
    grandchild = kid.child()
    assert grandchild.nats_connection() is parent.nats_connection()
    assert {"kvGet", "registrations"} <= parent.template_function_names()
