"""Load-time health-check rules: upstream's words first, ours after."""
from __future__ import annotations

import pytest

from ccm.healthcheck.rules import validate_checks
from ccm.model.errors import ValidationError


@pytest.mark.parametrize("check,message", [
    ({"name": "x"}, "health_checks[0]: 'format' flag is required: a health check needs a command or goss_rules"),
    ({"command": "/bin/true", "goss_rules": {"file": {}}}, "health_checks[0]: 'command' or 'goss_rules' are "
                                                           "mutually exclusive"),
    ({"command": "/bin/true", "format": "goss"}, "health_checks[0].format: 'format' must be 'nagios' when "
                                                 "using 'command'"),
])
def test_rule_messages(check, message):
    with pytest.raises(ValidationError) as err:
        validate_checks([check])
    assert str(err.value) == message
