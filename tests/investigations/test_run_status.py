"""A run's status moves only along the transitions the model lists; every other move is refused."""

from __future__ import annotations

import pytest

from agent.models import IllegalTransition, Investigation

Status = Investigation.Status
ALLOWED = [(old, new) for old, targets in Investigation.TRANSITIONS.items() for new in targets]
EVERY_MOVE = [(old, new) for old in Status for new in Status]
FORBIDDEN = [move for move in EVERY_MOVE if move not in ALLOWED]


def _run(owner, status: str) -> Investigation:
    return Investigation.objects.create(owner=owner, question="Les céréales en 1887 ?",
                                        status=status)


def test_the_table_names_every_status_and_only_known_ones():
    assert set(Investigation.TRANSITIONS) == set(Status)
    for targets in Investigation.TRANSITIONS.values():
        assert targets <= set(Status)
    assert Investigation.TRANSITIONS[Status.FINISHED] == frozenset(), "a finished run is final"
    assert (Status.CANCELLED, Status.RUNNING) in FORBIDDEN, "a cancelled run is never claimed"


@pytest.mark.parametrize(("old", "new"), EVERY_MOVE)
def test_one_run_moves_only_where_the_table_allows(users, old, new):
    investigation = _run(users["alice"], old)
    if (old, new) in ALLOWED:
        investigation.transition_to(new, error="why")
        expected = (new, "why")
    else:
        with pytest.raises(IllegalTransition, match=f"cannot go from {old} to {new}"):
            investigation.transition_to(new, error="why")
        expected = (old, "")
    investigation.refresh_from_db()
    assert (investigation.status, investigation.error) == expected


@pytest.mark.parametrize(("old", "new"), EVERY_MOVE)
def test_a_selection_moves_in_one_update_only_where_the_table_allows(users, old, new):
    investigation = _run(users["alice"], old)
    moved = Investigation.objects.filter(pk=investigation.pk).transition_to(new, error="why")
    investigation.refresh_from_db()
    allowed = (old, new) in ALLOWED
    assert moved == (1 if allowed else 0)
    assert (investigation.status, investigation.error) == ((new, "why") if allowed else (old, ""))


def test_two_racing_resumes_of_one_interrupted_run_let_only_one_win(users):
    investigation = _run(users["alice"], Status.INTERRUPTED)
    selection = Investigation.objects.filter(pk=investigation.pk, status=Status.INTERRUPTED)
    first = selection.transition_to(Status.QUEUED)
    second = selection.transition_to(Status.QUEUED)
    assert (first, second) == (1, 0)
