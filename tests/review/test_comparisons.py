"""Run again and compare: linked reruns, sources in force side by side, batches per question."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import override_settings

from agent.engine.offline import OfflinePolicy
from agent.investigations import execution, services
from agent.investigations.services import InvestigationError, RunChoices
from agent.models import Batch, Investigation
from agent.review import services as review_services
from agent.review.comparisons import (
    batch_comparison_csv,
    batches_compared,
    investigation_comparison_csv,
    investigations_compared,
)

GAULOIS = "legaulois_1887_v1:18870226"
INTRANSIGEANT = "lintransigeant_1887_v1:18870227"
COURSES = "lintransigeant_1887_v1:18870301"


def _run(investigation, tiny_archive):
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=OfflinePolicy())
    investigation.refresh_from_db()
    return investigation


def _rows(body: str) -> list[dict[str, str]]:
    assert body.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(body.lstrip("\ufeff"))))


def test_a_rerun_keeps_the_question_and_gold_and_takes_the_new_choices(users, finished):
    Investigation.objects.filter(pk=finished.pk).update(qid="q7", gold_keys=[GAULOIS])
    finished.refresh_from_db()
    rerun = services.investigation_rerun(
        investigation=finished, owner=users["alice"],
        choices=RunChoices(policy="offline", settings={"search_limit": 3, "m_max": 2},
                           sub_corpus="lintransigeant_1887_v1"))
    assert rerun.rerun_of == finished and list(finished.reruns.all()) == [rerun]
    assert (rerun.question, rerun.qid, rerun.gold_keys) == (finished.question, "q7", [GAULOIS])
    assert rerun.sub_corpus == "lintransigeant_1887_v1"
    assert rerun.engine_settings["search_limit"] == 3 and rerun.engine_settings["m_max"] == 2
    assert rerun.engine_settings["step_budget"] == finished.engine_settings["step_budget"]
    assert rerun.policy == "offline" and rerun.status == Investigation.Status.QUEUED


@pytest.mark.parametrize("choices, message", [
    (RunChoices(policy="offline", settings={"search_limit": 0}), "between 1 and 50"),
    (RunChoices(policy="offline", settings={"rationale_max": 5}), "cannot be changed"),
    (RunChoices(policy="llm"), "needs a model endpoint"),
])
def test_a_rerun_refuses_what_this_instance_cannot_run(users, finished, choices, message):
    with pytest.raises(InvestigationError, match=message):
        services.investigation_rerun(investigation=finished, owner=users["alice"],
                                     choices=choices)
    assert not finished.reruns.exists()


def test_only_the_owner_runs_an_investigation_again(users, finished):
    with pytest.raises(InvestigationError, match="owner"):
        services.investigation_rerun(investigation=finished, owner=users["bob"],
                                     choices=RunChoices(policy="offline"))


@override_settings(TRACE_LLM_BASE_URL="http://127.0.0.1:9/v1", TRACE_LLM_MODEL="model-a",
                   TRACE_LLM_PLANNER_MODEL="model-a", TRACE_LLM_AGENT_MODEL="model-a",
                   TRACE_LLM_RERANKER_MODEL="model-a", TRACE_LLM_MODELS=["model-b"])
def test_with_an_endpoint_a_rerun_may_choose_the_llm_and_another_offered_model(users, finished):
    rerun = services.investigation_rerun(
        investigation=finished, owner=users["alice"],
        choices=RunChoices(policy="llm", agent_model="model-b"))
    assert rerun.policy == "llm" and rerun.policy_label == "LLM: model-b"
    assert rerun.models_used == {"planner": "model-a", "agent": "model-b",
                                 "reranker": "model-a"}
    with pytest.raises(InvestigationError, match="not offered"):
        services.investigation_rerun(investigation=finished, owner=users["alice"],
                                     choices=RunChoices(policy="llm", agent_model="model-z"))


def test_two_runs_compare_by_their_sources_in_force(users, finished, tiny_archive):
    first = finished
    assert {GAULOIS, INTRANSIGEANT} <= set(first.ranked_keys)
    rerun = _run(services.investigation_rerun(
        investigation=first, owner=users["alice"],
        choices=RunChoices(policy="offline", settings={"search_limit": 3})), tiny_archive)
    assert {GAULOIS, INTRANSIGEANT} <= set(rerun.ranked_keys)
    assert rerun.verdicts.get(document_key=COURSES).decision == "reject"
    # The historian's overrides are in force on A: one accept rejected, one reject accepted.
    review_services.verdict_override(investigation=first, user=users["alice"], document_key=GAULOIS,
                              decision="reject", note="hors sujet")
    review_services.verdict_override(investigation=first, user=users["alice"], document_key=COURSES,
                              decision="accept", note="=HYPERLINK(\"x\") les courses comptent")

    comparison = investigations_compared(first, rerun)
    assert [s.document_key for s in comparison.both] == [INTRANSIGEANT]
    assert [s.document_key for s in comparison.only_a] == [COURSES]
    assert [s.document_key for s in comparison.only_b] == [GAULOIS]
    assert comparison.only_a[0].b.shown_state == "rejected"
    changed = {s.document_key: s for s in comparison.changed}
    assert set(changed) == {GAULOIS, COURSES}
    assert changed[COURSES].a.state == "accepted" and changed[COURSES].b.state == "rejected"
    assert changed[COURSES].a.decided_by.startswith("alice (historian)")
    assert changed[COURSES].a.rationale.startswith("=HYPERLINK")
    assert changed[COURSES].b.decided_by == "the agent" and changed[COURSES].b.rationale
    assert [(d.what, d.a, d.b) for d in comparison.differences] == [
        ("Passages per search", "8", "3")]
    assert comparison.score_a is None and not comparison.has_gold

    rows = {row["document_key"]: row for row in _rows(investigation_comparison_csv(comparison))}
    assert rows[INTRANSIGEANT]["group"] == "accepted in both"
    assert rows[INTRANSIGEANT]["verdict_changed"] == "no"
    assert rows[COURSES]["group"] == "only in A" and rows[COURSES]["b_state"] == "rejected"
    assert rows[GAULOIS]["group"] == "only in B" and rows[GAULOIS]["verdict_changed"] == "yes"
    assert rows[COURSES]["a_rationale"].startswith("'=HYPERLINK"), "formula neutralised"


def test_a_document_one_run_never_saw_is_not_found_there(users, finished, tiny_archive):
    rerun = _run(services.investigation_rerun(
        investigation=finished, owner=users["alice"],
        choices=RunChoices(policy="offline", sub_corpus="lintransigeant_1887_v1")), tiny_archive)
    comparison = investigations_compared(finished, rerun)
    only_a = {s.document_key: s for s in comparison.only_a}
    assert only_a[GAULOIS].b.shown_state == "not found" and not only_a[GAULOIS].verdict_changed
    assert [s.document_key for s in comparison.both] == [INTRANSIGEANT]
    assert comparison.only_b == []


def test_gold_scores_each_side_on_its_accepted_sources_in_force(users, finished, tiny_archive):
    Investigation.objects.filter(pk=finished.pk).update(gold_keys=[GAULOIS, INTRANSIGEANT])
    finished.refresh_from_db()
    rerun = _run(services.investigation_rerun(
        investigation=finished, owner=users["alice"],
        choices=RunChoices(policy="offline", sub_corpus="lintransigeant_1887_v1")), tiny_archive)
    comparison = investigations_compared(finished, rerun)
    assert comparison.score_a is not None and comparison.score_b is not None
    assert comparison.score_a.recall_at_10 == 1.0 and comparison.score_a.found == 2
    assert comparison.score_b.recall_at_10 == 0.5 and comparison.score_b.found == 1
    # Rejecting a gold source in A takes it out of A's sources in force, and of its recall.
    review_services.verdict_override(investigation=finished, user=users["alice"],
                              document_key=GAULOIS, decision="reject")
    assert investigations_compared(finished, rerun).score_a.recall_at_10 == 0.5


def _batch(owner, name, scores):
    """A batch of finished runs: per qid, (ranked keys, gold keys)."""
    batch = Batch.objects.create(owner=owner, name=name)
    for qid, (ranked, gold) in scores.items():
        Investigation.objects.create(owner=owner, batch=batch, qid=qid, question=f"Question {qid}",
                                     status=Investigation.Status.FINISHED, ranked_keys=ranked,
                                     gold_keys=gold)
    return batch


def test_two_batches_compare_question_by_question_largest_move_first(users):
    a = _batch(users["alice"], "A", {
        "q1": (["g1", "x", "y"], ["g1"]),        # R@10 1, MRR 1
        "q2": (["x", "g2"], ["g2"]),             # R@10 1, MRR 0.5
        "q3": (["x"], ["g3"]),                   # R@10 0
        "qa": (["x"], ["g"]),                    # only in A
    })
    b = _batch(users["alice"], "B", {
        "q1": (["x", "y"], ["g1"]),              # R@10 0: moved by -1
        "q2": (["g2"], ["g2"]),                  # R@10 1, MRR 1: moved by +0.5 (MRR only)
        "q3": (["g3"], ["g3"]),                  # R@10 1: moved by +1
        "qb": (["x"], ["g"]),                    # only in B
    })
    comparison = batches_compared(a, b)
    assert [m.qid for m in comparison.moves] == ["q1", "q3", "q2"]
    assert [m.recall_change for m in comparison.moves] == [-1.0, 1.0, 0.0]
    assert comparison.moves[2].mrr_change == 0.5
    assert [r.qid for r in comparison.only_a] == ["qa"]
    assert [r.qid for r in comparison.only_b] == ["qb"]
    totals = comparison.totals
    assert totals is not None and totals.questions == 3
    assert totals.recall_a == pytest.approx(2 / 3) and totals.recall_b == pytest.approx(2 / 3)
    assert totals.mrr_a == pytest.approx(0.5) and totals.mrr_b == pytest.approx(2 / 3)

    rows = _rows(batch_comparison_csv(comparison))
    assert [row["qid"] for row in rows] == ["q1", "q3", "q2", ""]
    assert rows[0]["recall_at_10_change"] == "-1.0", "a number, not a neutralised formula"
    assert rows[-1]["question"].startswith("mean over the 3 questions")
    assert float(rows[-1]["mrr_change"]) == pytest.approx(round(2 / 3 - 0.5, 4))


def test_an_unfinished_run_is_not_scored_and_sorts_last(users):
    a = _batch(users["alice"], "A", {"q1": (["g"], ["g"]), "q2": (["g"], ["g"])})
    b = _batch(users["alice"], "B", {"q1": (["g"], ["g"]), "q2": ([], ["g"])})
    b.investigations.filter(qid="q1").update(status=Investigation.Status.RUNNING)
    comparison = batches_compared(a, b)
    assert [(m.qid, m.scored) for m in comparison.moves] == [("q2", True), ("q1", False)]
    assert comparison.totals is not None and comparison.totals.questions == 1


def test_a_batch_runs_again_as_a_linked_batch_of_linked_runs(users):
    first = _batch(users["alice"], "dev", {"q1": ([], ["g"]), "q2": ([], ["h"])})
    rerun = services.batch_rerun(batch=first, owner=users["alice"],
                                 choices=RunChoices(policy="offline", settings={"m_max": 1}))
    assert rerun.rerun_of == first and rerun.name == "dev (run again)"
    runs = list(rerun.investigations.order_by("id"))
    assert [(r.qid, r.gold_keys, r.engine_settings["m_max"]) for r in runs] == [
        ("q1", ["g"], 1), ("q2", ["h"], 1)]
    assert [r.rerun_of.qid for r in runs] == ["q1", "q2"]
    with pytest.raises(InvestigationError, match="owner"):
        services.batch_rerun(batch=first, owner=users["bob"], choices=RunChoices(policy="offline"))


# Pages: run again, compare, download; another user's investigation or batch is a 404.

def test_run_again_is_prefilled_and_creates_a_linked_run(client, users, finished):
    client.force_login(users["alice"])
    page = client.get(f"/investigations/{finished.pk}/again/").content.decode()
    assert 'name="search_limit" value="8"' in page and 'value="offline" selected' in page
    response = client.post(f"/investigations/{finished.pk}/again/", {
        "policy": "offline", "sub_corpus": "lintransigeant_1887_v1", "date_from": "",
        "date_to": "", "m_max": 5, "step_budget": 12, "search_limit": 4,
        "warm_start_limit": 10, "held_pool_size": 10})
    rerun = Investigation.objects.get(rerun_of=finished)
    assert response.status_code == 302 and response["Location"] == f"/investigations/{rerun.pk}/"
    assert rerun.sub_corpus == "lintransigeant_1887_v1"
    assert rerun.engine_settings["search_limit"] == 4
    detail = client.get(f"/investigations/{rerun.pk}/").content.decode()
    assert f"?a={finished.pk}&amp;b={rerun.pk}" in detail
    detail = client.get(f"/investigations/{finished.pk}/").content.decode()
    assert f"?a={finished.pk}&amp;b={rerun.pk}" in detail
    listed = client.get("/investigations/").content.decode()
    assert f"runs #{finished.pk} again" in listed


def test_run_again_refuses_a_setting_out_of_bounds_and_another_users_run(client, users,
                                                                          finished):
    client.force_login(users["alice"])
    response = client.post(f"/investigations/{finished.pk}/again/", {
        "policy": "llm", "m_max": 99, "step_budget": 12, "search_limit": 8,
        "warm_start_limit": 10, "held_pool_size": 10})
    assert response.status_code == 200 and not finished.reruns.exists()
    client.force_login(users["eve"])
    assert client.get(f"/investigations/{finished.pk}/again/").status_code == 404


def test_the_comparison_page_and_csv(client, users, finished, tiny_archive):
    rerun = _run(services.investigation_rerun(
        investigation=finished, owner=users["alice"],
        choices=RunChoices(policy="offline", sub_corpus="lintransigeant_1887_v1")), tiny_archive)
    client.force_login(users["alice"])
    page = client.get(f"/investigations/compare/?a={finished.pk}&b={rerun.pk}")
    assert page.status_code == 200
    body = page.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert 'data-testid="only-a"' in body and "Le Gaulois, 1887-02-26" in body
    response = client.get(f"/investigations/compare/csv/?a={finished.pk}&b={rerun.pk}")
    assert response["Content-Disposition"] == (
        f'attachment; filename="trace-compare-{finished.pk}-{rerun.pk}.csv"')
    groups = {row["document_key"]: row["group"] for row in _rows(response.content.decode())}
    assert groups[GAULOIS] == "only in A" and groups[INTRANSIGEANT] == "accepted in both"
    assert client.get(f"/investigations/compare/?a={finished.pk}").status_code == 400


@pytest.mark.parametrize("path", ["compare/", "compare/csv/"])
def test_a_comparison_with_another_users_investigation_is_a_404_unless_shared(
        client, users, finished, path):
    own = services.investigation_create(owner=users["eve"], question="Question d'Eve ?",
                                        enqueue=False)
    client.force_login(users["eve"])
    url = f"/investigations/{path}?a={own.pk}&b={finished.pk}"
    assert client.get(url).status_code == 404
    assert client.get(f"/investigations/{path}?a={finished.pk}&b={own.pk}").status_code == 404
    token = services.investigation_share(investigation=finished)
    assert client.get(url + "&tb=wrong").status_code == 404
    assert client.get(url + "&ta=" + token).status_code == 404, "a token opens only its side"
    assert client.get(url + "&tb=" + token).status_code == 200
    services.investigation_share(investigation=finished, enable=False)
    assert client.get(url + "&tb=" + token).status_code == 404


def test_the_batch_comparison_page_csv_and_another_users_batch(client, users):
    a = _batch(users["alice"], "A", {"q1": (["g"], ["g"])})
    b = _batch(users["alice"], "B", {"q1": ([], ["g"])})
    client.force_login(users["alice"])
    page = client.get(f"/investigations/batches/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert 'data-qid="q1"' in page and "-1.00" in page
    rows = _rows(client.get(f"/investigations/batches/compare/csv/?a={a.pk}&b={b.pk}")
                 .content.decode())
    assert rows[0]["qid"] == "q1" and float(rows[0]["recall_at_10_change"]) == -1.0
    eves = _batch(users["eve"], "E", {"q1": (["g"], ["g"])})
    for path in ("compare/", "compare/csv/"):
        url = f"/investigations/batches/{path}?a={a.pk}&b={eves.pk}"
        assert client.get(url).status_code == 404
    assert client.get(f"/investigations/batches/{eves.pk}/again/").status_code == 404


def test_a_batch_runs_again_from_its_page(client, users):
    first = _batch(users["alice"], "dev", {"q1": ([], ["g"])})
    client.force_login(users["alice"])
    response = client.post(f"/investigations/batches/{first.pk}/again/", {
        "policy": "offline", "sub_corpus": "", "m_max": 2, "step_budget": 12,
        "search_limit": 8, "warm_start_limit": 10, "held_pool_size": 10})
    rerun = Batch.objects.get(rerun_of=first)
    assert response["Location"] == f"/investigations/batches/{rerun.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert f"?a={first.pk}&amp;b={rerun.pk}" in page
    assert rerun.investigations.get().engine_settings["m_max"] == 2


@override_settings(TRACE_LLM_BASE_URL="http://127.0.0.1:9/v1", TRACE_LLM_AGENT_MODEL="model-a",
                   TRACE_LLM_PLANNER_MODEL="model-p", TRACE_LLM_MODELS=["model-b"])
def test_the_chat_client_asks_the_model_the_run_was_created_with():
    from agent.investigations.chat import configured_chat_model

    client = configured_chat_model({"agent": "model-b"})
    assert client.models["agent"] == "model-b" and client.models["planner"] == "model-p"
    assert configured_chat_model().models["agent"] == "model-a"


def test_a_shared_run_offers_to_compare_it_with_one_of_the_viewers_own(client, users, finished):
    own = services.investigation_create(owner=users["bob"], question="Question de Bob ?",
                                        enqueue=False)
    token = services.investigation_share(investigation=finished)
    client.force_login(users["bob"])
    page = client.get(f"/investigations/{finished.pk}/?token={token}").content.decode()
    assert f'name="ta" value="{token}"' in page and f'<option value="{own.pk}">' in page
    assert 'data-testid="run-again"' not in page, "only the owner runs it again"
    response = client.get(f"/investigations/compare/?a={finished.pk}&ta={token}&b={own.pk}")
    assert response.status_code == 200
    assert f"/investigations/{finished.pk}/?token={token}" in response.content.decode()
