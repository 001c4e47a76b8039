"""The slow-client measurement stays on loopback and within its bounds."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from measurement import slow_clients


@pytest.mark.parametrize("url", ["http://10.0.0.1:8000", "http://192.168.1.1/",
                                 "http://8.8.8.8/", "https://127.0.0.1/", "ftp://localhost/"])
def test_only_loopback_http_urls_are_accepted(url):
    with pytest.raises(slow_clients.NotLoopback):
        slow_clients.check_loopback(url)


def test_loopback_urls_are_accepted():
    assert slow_clients.check_loopback("http://127.0.0.1:8123") == ("127.0.0.1", 8123)
    assert slow_clients.check_loopback("http://localhost/") == ("localhost", 80)


@pytest.mark.parametrize("kwargs", [{"connections": 0}, {"connections": 201},
                                    {"seconds": 0}, {"seconds": 601}, {"interval": 0.01}])
def test_bounds_are_enforced_before_any_connection(kwargs):
    with pytest.raises(ValueError):
        slow_clients.measure("http://127.0.0.1:9", **kwargs)


def test_the_command_refuses_another_host():
    with pytest.raises(CommandError, match="not a loopback address"):
        call_command("slow_clients", "--url", "http://10.1.2.3:8000", "--seconds", "1")


def test_an_unanswered_probe_is_reported_as_such():
    # Port 9 (discard) has no listener here: the probe fails fast and says so.
    result, server = slow_clients.probe("http://127.0.0.1:9")
    assert result.status is None and result.error and server == ""
    run = slow_clients.SlowClientRun(url="http://127.0.0.1:9", connections=1, interval=1,
                                     seconds=1, during=[result])
    assert run.unanswered_during() == 1
    assert "none answered" in slow_clients.report(run, title="t", command="c")
