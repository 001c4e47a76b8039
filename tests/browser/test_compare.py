"""Run again and compare in the browser: an investigation run again with another restriction,
the two runs compared (three groups, changed verdicts, CSV), another user's run a 404; a batch
run again and compared question by question."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Browser, Page, expect

from agent.models import Batch, Investigation
from common.ranking_metrics import multi_gold_mrr, recall_at_k
from tests.browser.conftest import ask, log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
QUESTION = "Que disent Le Gaulois et L'Intransigeant du discours de M. Lejeune sur les céréales ?"
GAULOIS = "legaulois_1887_v1:18870226"
INTRANSIGEANT = "lintransigeant_1887_v1:18870227"


def _group(page: Page, testid: str) -> list[str]:
    return page.get_by_test_id(testid).locator("li").evaluate_all(
        "items => items.map(li => li.dataset.document)")


def _download_csv(page: Page, testid: str) -> list[dict[str, str]]:
    with page.expect_download() as info:
        page.get_by_test_id(testid).click()
    body = Path(info.value.path()).read_text(encoding="utf-8")
    assert body.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(body.lstrip("\ufeff"))))


def test_run_again_with_another_restriction_and_compare_the_two_runs(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    log_in(page, base)
    first = ask(page, base, QUESTION)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)

    # Run again: prefilled from the first run; only the restriction changes.
    page.get_by_test_id("run-again").click()
    expect(page.get_by_test_id("again-question")).to_have_text(QUESTION)
    expect(page.locator("select[name=policy]")).to_have_value("offline")
    expect(page.locator("input[name=search_limit]")).to_have_value("8")
    page.select_option("select[name=sub_corpus]", "lintransigeant_1887_v1")
    page.get_by_test_id("run-again-submit").click()
    expect(page.locator("h1.question")).to_have_text(QUESTION)
    second = int(page.url.rstrip("/").rsplit("/", 1)[1])
    assert second != first
    assert Investigation.objects.get(pk=second).rerun_of_id == first
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=90_000)
    expect(page.locator("#inv-status")).to_contain_text("only L'Intransigeant")

    page.get_by_test_id("compare-first").click()
    expect(page.get_by_role("heading", name="Compare two runs")).to_be_visible()
    compare_url = page.url
    assert f"a={first}" in compare_url and f"b={second}" in compare_url
    differences = page.get_by_test_id("compare-runs").locator("tr.difference")
    expect(differences).to_have_count(1)
    assert [cell.strip() for cell in differences.locator("th, td").all_inner_texts()] == [
        "sub-corpus", "any sub-corpus", "L'Intransigeant"]
    assert _group(page, "accepted-both") == [INTRANSIGEANT]
    assert _group(page, "only-a") == [GAULOIS]
    assert _group(page, "only-b") == []
    expect(page.get_by_test_id("only-a")).to_contain_text("B: not found")
    rows = {row["document_key"]: row for row in _download_csv(page, "compare-csv")}
    assert rows[INTRANSIGEANT]["group"] == "accepted in both"
    assert rows[GAULOIS]["group"] == "only in A" and rows[GAULOIS]["b_state"] == "not found"

    # The historian rejects, in the first run, a source both runs accepted: the comparison
    # follows the sources in force, and shows the changed verdict with both rationales.
    page.goto(f"{base}/investigations/{first}/review/")
    source = page.locator(f'#ranked article.source[data-document="{INTRANSIGEANT}"]')
    source.locator("form.decide input[name=note]").fill("Une raillerie, pas un compte rendu.")
    source.locator("form.decide button[value=reject]").click()
    expect(page.locator(f'#ranked article.source[data-document="{INTRANSIGEANT}"]')
           ).to_have_count(0)
    page.goto(compare_url)
    assert _group(page, "accepted-both") == []
    assert _group(page, "only-a") == [GAULOIS]
    assert _group(page, "only-b") == [INTRANSIGEANT]
    changed = page.get_by_test_id("changed").locator(f'tr[data-document="{INTRANSIGEANT}"]')
    cells = changed.locator("td")
    expect(cells.nth(1)).to_contain_text("rejected")
    expect(cells.nth(1)).to_contain_text("historian")
    expect(cells.nth(1)).to_contain_text("Une raillerie, pas un compte rendu.")
    expect(cells.nth(2)).to_contain_text("accepted")
    expect(cells.nth(2)).to_contain_text("the agent")
    agent_rationale = cells.nth(2).locator(".rationale").inner_text()
    assert agent_rationale.strip()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "comparison.png", full_page=True)

    rows = {row["document_key"]: row for row in _download_csv(page, "compare-csv")}
    assert rows[INTRANSIGEANT]["group"] == "only in B"
    assert rows[INTRANSIGEANT]["verdict_changed"] == "yes"
    assert rows[INTRANSIGEANT]["a_rationale"] == "Une raillerie, pas un compte rendu."
    assert rows[INTRANSIGEANT]["b_rationale"] == " ".join(agent_rationale.split()).strip("“”")

    # The comparison is reachable from the second run too.
    page.goto(f"{base}/investigations/{first}/")
    expect(page.get_by_test_id("compare-rerun")).to_have_attribute(
        "href", f"/investigations/compare/?a={first}&b={second}")


def test_a_comparison_with_another_users_investigation_is_a_404_unless_shared(
        browser: Browser, page: Page, live_server, historian):
    from agent.investigations import services

    base = live_server.url
    theirs = services.investigation_create(owner=historian, question=QUESTION, enqueue=False)
    colleague = get_user_model().objects.create_user(username="colleague",
                                                     password="Colleague-1887")
    own = services.investigation_create(owner=colleague, question=QUESTION, enqueue=False)
    log_in(page, base, "colleague", "Colleague-1887")
    url = f"{base}/investigations/compare/?a={own.pk}&b={theirs.pk}"
    for address in (url, url + "&tb=not-the-token", f"{url.replace('/compare/', '/compare/csv/')}"):
        response = page.goto(address)
        assert response is not None and response.status == 404, address
    token = services.investigation_share(investigation=theirs)
    response = page.goto(f"{url}&tb={token}")
    assert response is not None and response.status == 200
    expect(page.get_by_role("heading", name="Compare two runs")).to_be_visible()


def test_run_a_batch_again_and_compare_the_two_batches(
        page: Page, live_server, historian, long_archive, celery_worker_process):
    base = live_server.url
    log_in(page, base)
    questions = [
        {"qid": "lejeune", "question": QUESTION, "gold_ids": [GAULOIS, INTRANSIGEANT]},
        {"qid": "gaulois", "question": "Que dit Le Gaulois de M. Lejeune et des céréales ?",
         "gold_ids": [GAULOIS]},
    ]
    page.goto(f"{base}/investigations/batches/new/")
    page.fill("input[name=name]", "Lejeune")
    page.set_input_files("input[name=file]", files=[{
        "name": "questions.jsonl", "mimeType": "application/json",
        "buffer": "\n".join(json.dumps(q, ensure_ascii=False) for q in questions).encode()}])
    page.click("button:has-text('Start the batch')")
    expect(page.locator("#progress")).to_contain_text("2 of 2 finished", timeout=120_000)
    first = Batch.objects.get(name="Lejeune")

    page.get_by_test_id("batch-run-again").click()
    page.select_option("select[name=sub_corpus]", "lintransigeant_1887_v1")
    page.get_by_test_id("run-again-submit").click()
    expect(page.get_by_role("heading", name="Batch: Lejeune (run again)")).to_be_visible()
    expect(page.locator("#progress")).to_contain_text("2 of 2 finished", timeout=120_000)
    second = Batch.objects.get(rerun_of=first)

    page.get_by_test_id("batch-compare-first").click()
    expect(page.get_by_role("heading", name="Compare two batches")).to_be_visible()
    runs = {(run.batch_id, run.qid): run
            for run in Investigation.objects.filter(batch__in=[first, second])}
    assert all(runs[second.pk, qid].sub_corpus == "lintransigeant_1887_v1"
               and runs[second.pk, qid].rerun_of == runs[first.pk, qid]
               for qid in ("lejeune", "gaulois"))
    expected = {}
    for qid in ("lejeune", "gaulois"):
        a, b = runs[first.pk, qid], runs[second.pk, qid]
        expected[qid] = (recall_at_k(a.ranked_keys, a.gold_keys, 10),
                         recall_at_k(b.ranked_keys, b.gold_keys, 10),
                         multi_gold_mrr(a.ranked_keys, a.gold_keys),
                         multi_gold_mrr(b.ranked_keys, b.gold_keys))
    # Restricted to L'Intransigeant, the second batch cannot find Le Gaulois's article.
    assert expected["gaulois"][1] == 0.0 and expected["gaulois"][0] == 1.0
    moves = {qid: a_b[1] - a_b[0] for qid, a_b in expected.items()}
    largest_first = sorted(moves, key=lambda qid: -abs(moves[qid]))

    table = page.get_by_test_id("batch-moves").locator("tbody tr")
    assert table.evaluate_all("rows => rows.map(r => r.dataset.qid)") == largest_first
    for row in table.all():
        qid = row.get_attribute("data-qid")
        recall_a, recall_b, mrr_a, mrr_b = expected[qid]
        cells = [cell.strip() for cell in row.locator("td").all_inner_texts()]
        assert cells[2:8] == [f"{recall_a:.2f}", f"{recall_b:.2f}", f"{recall_b - recall_a:.2f}",
                              f"{mrr_a:.3f}", f"{mrr_b:.3f}", f"{mrr_b - mrr_a:.3f}"], qid
    mean_a = sum(e[0] for e in expected.values()) / 2
    mean_b = sum(e[1] for e in expected.values()) / 2
    recall_row = page.get_by_test_id("batch-totals").locator("tbody tr").first
    assert [cell.strip() for cell in recall_row.locator("td").all_inner_texts()] == [
        f"{mean_a:.3f}", f"{mean_b:.3f}", f"{mean_b - mean_a:.3f}"]

    rows = _download_csv(page, "batch-compare-csv")
    assert [row["qid"] for row in rows] == [*largest_first, ""]
    for row in rows[:2]:
        recall_a, recall_b, mrr_a, mrr_b = expected[row["qid"]]
        assert float(row["a_recall_at_10"]) == pytest.approx(recall_a, abs=1e-4)
        assert float(row["recall_at_10_change"]) == pytest.approx(recall_b - recall_a, abs=1e-4)
        assert float(row["mrr_change"]) == pytest.approx(mrr_b - mrr_a, abs=1e-4)
    assert float(rows[2]["recall_at_10_change"]) == pytest.approx(mean_b - mean_a, abs=1e-4)

    # Each question's pair of runs opens as an investigation comparison, scored against gold.
    qid = largest_first[0]
    recall_a, recall_b, mrr_a, mrr_b = expected[qid]
    table.first.get_by_role("link", name="compare").click()
    expect(page.get_by_role("heading", name="Compare two runs")).to_be_visible()
    gold = page.get_by_test_id("gold-scores").locator("td")
    expect(gold.nth(0)).to_contain_text(f"R@10 {recall_a:.2f} · MRR {mrr_a:.3f}")
    expect(gold.nth(1)).to_contain_text(f"R@10 {recall_b:.2f} · MRR {mrr_b:.3f}")
