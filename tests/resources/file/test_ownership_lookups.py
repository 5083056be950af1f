"""Owner, group and mode lookups answer what a fresh lookup gives, remember only answers
from resolved ids, and are forgotten when a run starts."""
from __future__ import annotations

import grp
import os
import pwd

import pytest

from ccm.resources import ownership


def _plain_id(name: str, find):
    if name.isascii() and name.isdigit():
        return int(name)
    try:
        return find(name)[2]   # pw_uid / gr_gid
    except KeyError:
        return None


def _plain_uid(name: str):
    return _plain_id(name, pwd.getpwnam)


def _plain_gid(name: str):
    return _plain_id(name, grp.getgrnam)


def _plain_same(observed: str, desired: str, resolve) -> bool:
    if observed == desired:
        return True
    a = resolve(observed) if observed else None
    b = resolve(desired) if desired else None
    return a is not None and a == b


ME = pwd.getpwuid(os.getuid()).pw_name
MY_GROUP = grp.getgrgid(os.getgid()).gr_name
USERS = [ME, str(os.getuid()), "0", "root", "no-such-user-ccm", "", "65534", "٣"]
GROUPS = [MY_GROUP, str(os.getgid()), "0", "root", "no-such-group-ccm", "", "65534", "٣"]


@pytest.fixture(autouse=True)
def _fresh_cache():
    ownership.clear_id_cache()
    yield
    ownership.clear_id_cache()


def test_owner_and_group_matches_equal_fresh_lookups_asked_twice():
    for _ in range(2):   # the second round answers from the memo
        for observed in USERS:
            for desired in USERS:
                assert ownership.owner_matches(observed, desired) == _plain_same(observed, desired, _plain_uid), \
                    (observed, desired)
        for observed in GROUPS:
            for desired in GROUPS:
                assert ownership.group_matches(observed, desired) == _plain_same(observed, desired, _plain_gid), \
                    (observed, desired)


def test_only_pairs_of_resolved_ids_are_remembered():
    assert ownership.owner_matches("root", "0")
    assert not ownership.owner_matches("root", "no-such-user-ccm")
    assert not ownership.group_matches("no-such-group-ccm", "0")
    assert ownership._ids.same_user == {("root", "0"): True}
    assert ownership._ids.same_group == {}


def test_a_new_run_forgets_remembered_pairs_and_names():
    assert ownership.owner_matches("root", "0") and ownership.group_matches("root", "0")
    assert ownership.user_name(0) == "root"
    ownership.clear_id_cache()
    assert ownership._ids.same_user == {} and ownership._ids.same_group == {}
    assert ownership._ids.user == {}


@pytest.mark.parametrize("uid", [0, os.getuid(), 2 ** 31 - 7])
def test_user_and_group_names_equal_fresh_lookups(uid):
    for _ in range(2):
        try:
            want = pwd.getpwuid(uid).pw_name
        except KeyError:
            want = str(uid)
        assert ownership.user_name(uid) == want
        try:
            want = grp.getgrgid(uid).gr_name
        except KeyError:
            want = str(uid)
        assert ownership.group_name(uid) == want


def test_format_mode_equals_the_plain_formatting_asked_twice():
    modes = list(range(0o1000)) + [0o100644, 0o40755, 0o104755, 0o20666, 1 << 20, 0o7777]
    for _ in range(2):
        for mode in modes:
            assert ownership.format_mode(mode) == f"{mode & 0o777:04o}"


def test_a_missing_user_or_group_is_upstreams_lookup_error():
    from ccm.model.errors import ProviderError
    from ccm.resources.ownership import resolve_ids

    with pytest.raises(ProviderError) as err:
        resolve_ids("no-such-user-ccm", "root")
    assert str(err.value) == 'could not lookup user "no-such-user-ccm": no such user'
    with pytest.raises(ProviderError) as err:
        resolve_ids("root", "no-such-group-ccm")
    assert str(err.value) == 'could not lookup group "no-such-group-ccm": no such group'


def test_a_lookup_found_before_a_clear_is_not_stored_after_it(monkeypatch):
    """A run starting in another thread (``clear_id_cache``) while a lookup is under way:
    what was found from the old run's view is not remembered into the new one."""
    def user_of_then_clear(uid):
        name = pwd.getpwuid(uid).pw_name
        ownership.clear_id_cache()
        return name

    monkeypatch.setattr(ownership, "_user_of", user_of_then_clear)
    assert ownership.user_name(os.getuid()) == ME
    assert ownership._ids.user == {}
    monkeypatch.undo()
    assert ownership.user_name(os.getuid()) == ME and ownership._ids.user == {os.getuid(): ME}


def test_numeric_ids_are_themselves_and_remembered_for_the_run():
    assert ownership.uid_for("0") == 0 and ownership.known_uid("0") == 0
    assert ownership.gid_for(str(os.getgid())) == os.getgid() == ownership.known_gid(str(os.getgid()))
    assert ownership.uid_for("no-such-user-ccm") is None and ownership.known_uid("no-such-user-ccm") is None
    ownership.clear_id_cache()
    assert ownership.known_uid("0") is None
