"""The hostile cases of `manage.py hardening_report` get the answers expected (the web server's
two cases are tried by tests/site/test_web_server.py on a process of its own)."""

from __future__ import annotations

import pytest

from measurement import hardening


@pytest.mark.django_db
def test_the_application_cases_are_answered_as_expected():
    cases = hardening.application_cases()
    assert len(cases) >= 20
    assert [case for case in cases if not case.held] == []


def test_the_import_and_iiif_cases_are_refused():
    cases = hardening.import_cases() + hardening.iiif_cases()
    assert {case.area for case in cases} == {"imports", "IIIF"}
    assert [case for case in cases if not case.held] == []


def test_a_case_that_did_not_hold_is_marked_in_the_page():
    page = hardening.report([hardening.Case("IIIF", "http://x|y", "refused:", "accepted")],
                            command="python manage.py hardening_report")
    assert "0 of 1 cases got the answer expected" in page
    assert "| IIIF | http://x\\|y | refused: | accepted | **no** |" in page
