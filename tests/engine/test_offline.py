"""Check the rule-based offline policy."""

from __future__ import annotations

import re

import pytest

from agent.engine import OfflinePolicy, run_investigation
from agent.engine.offline_plan import offline_plan
from agent.engine.policy import RankContext, RankItem
from agent.engine.sinks import ListSink
from agent.engine.types import VerdictSignals
from agent.engine.wording import language_of
from tests.engine.conftest import INFOS, Q, make_chunks
from tests.fakes.retriever import InMemoryRetriever, chunk


def strip(events):
    return [(e.seq, e.kind, e.sub_question_index,
             {k: v for k, v in e.payload().items() if not k.endswith("seconds")}) for e in events]


def test_offline_policy_is_deterministic(retriever):
    runs = []
    for _ in range(2):
        sink = ListSink()
        result = run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
        runs.append((result.ranked_document_keys, strip(sink.events)))
    assert runs[0] == runs[1]
    assert runs[0][0]


def test_offline_plan_targets_each_mentioned_sub_corpus():
    q = "En 1887, entre L'Intransigeant et Le Gaulois, lequel critique M. Lejeune ?"
    plan = offline_plan(q, INFOS, 5, None)
    assert [sq.target_sub_corpus for sq in plan] == ["intran", "gaulois"]
    # Each side of the comparison is asked of its own paper, named in its sub-question.
    assert [sq.text for sq in plan] == ["En 1887, L'Intransigeant critique-t-il M. Lejeune ?",
                                        "En 1887, Le Gaulois critique-t-il M. Lejeune ?"]


def test_offline_plan_maps_the_chamber_and_the_press():
    plan = offline_plan("Que dit M. Ribot à la Chambre, et comment la presse réagit-elle ?",
                        INFOS, 5, None)
    assert {sq.target_sub_corpus for sq in plan} == {"debats", "gaulois", "intran"}
    assert offline_plan("Quel journal dramatise la disette ?", INFOS, 5, None)[0] \
        .target_sub_corpus in {"gaulois", "intran"}


def test_offline_plan_fans_out_when_no_sub_corpus_is_named():
    plan = offline_plan("Qui parle des sucres en mai 1887 ?", INFOS, 5, None)
    assert sorted(sq.target_sub_corpus for sq in plan) == ["debats", "gaulois", "intran"]
    assert plan[0].target_date == "1887-05"


def test_offline_plan_keeps_entity_surface_forms():
    plan = offline_plan("Comment M. Cuneo d'Ornano juge-t-il la loterie de la Pointe-à-Pitre ?",
                        INFOS, 5, None)
    assert "M. Cuneo d'Ornano" in plan[0].entities and "Pointe-à-Pitre" in plan[0].entities


FIGURES = re.compile(r"\d|q-terms|warm start|channels|bm25|dense|#")


def test_offline_rationales_say_in_french_why_the_passage_matters(retriever):
    sink = ListSink()
    run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
    verdicts = sink.of("verdict")
    accepted = [e for e in verdicts if e.verdict == "accept"]
    assert accepted
    for verdict in verdicts:
        assert 0 < len(verdict.rationale) <= 120
        assert not FIGURES.search(verdict.rationale), verdict.rationale
    # The question is French: so are the rationales, naming the person and the question's words.
    assert any("Nomme M. Lejeune" in v.rationale and "céréales" in v.rationale
               for v in accepted)
    assert all(language_of(v.rationale) == "fr" for v in accepted)
    assert OfflinePolicy.name == "offline policy (no LLM)"
    assert sink.of("llm_call") == []


def test_offline_rationales_follow_an_english_question(retriever):
    sink = ListSink()
    run_investigation("How does M. Lejeune defend the duty on céréales in the press?",
                      policy=OfflinePolicy(), retriever=retriever, sink=sink)
    verdicts = sink.of("verdict")
    assert verdicts
    for verdict in verdicts:
        assert 0 < len(verdict.rationale) <= 120 and not FIGURES.search(verdict.rationale)
    assert all(language_of(v.rationale) == "en" for v in verdicts if v.source == "agent")


def test_a_rationale_stays_within_the_limit_however_many_terms_match():
    terms = tuple(f"terme{i:02d}" for i in range(30))
    signals = VerdictSignals(query_terms=30, matched_terms=terms, found_by="warm_start",
                             batch_rank=1)
    text = OfflinePolicy().rationale("Quel journal parle de " + " ".join(signals.matched_terms),
                                     "accept", signals, ["M. Lejeune"])
    assert len(text) <= 120 and text.startswith("Nomme M. Lejeune et reprend « terme00 »")
    assert text.endswith("comme la question le demande")


def test_offline_evidence_is_the_sentence_carrying_the_question_terms():
    text = ("La séance est ouverte à deux heures. On lit le procès-verbal. "
            "M. Lejeune défend le droit sur les céréales devant la Chambre. La séance est levée.")
    retriever = InMemoryRetriever([chunk(1, 1, "debats:1", "debats", "1887-02-25", text)], INFOS)
    sink = ListSink()
    run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
    verdict = sink.of("verdict")[0]
    assert verdict.evidence.text == "M. Lejeune défend le droit sur les céréales devant la Chambre."
    assert text[verdict.evidence.start:verdict.evidence.end] == verdict.evidence.text


def test_offline_policy_respects_alternation_and_finishes(retriever):
    sink = ListSink()
    result = run_investigation(Q, policy=OfflinePolicy(), retriever=retriever, sink=sink)
    assert not [e for e in sink.of("feedback") if e.reason == "alternation_violation"]
    assert set(result.finish_reasons.values()) <= {"finish_action", "budget"}


def test_offline_policy_accepts_few_documents_per_sub_question(retriever):
    sink = ListSink()
    result = run_investigation(Q, policy=OfflinePolicy(max_accepted=2), retriever=retriever,
                               sink=sink)
    for chunks in result.accepted.values():
        assert len({c.document_key for c in chunks}) <= 2
    accepted = [e for e in sink.of("verdict") if e.verdict == "accept"
                and e.source == "agent"]
    assert accepted and all(v.signals.batch_rank <= 5 for v in accepted)


def _signals(matched: int, found_by: str, rank: int) -> VerdictSignals:
    return VerdictSignals(query_terms=4, matched_terms=tuple("abcd"[:matched]),
                          found_by=found_by, batch_rank=rank, channel_ranks={"bm25": rank})


def _items(rationale) -> list[RankItem]:
    def item(doc, sub_corpus, day, signals):
        return RankItem(doc, sub_corpus, doc, day, [rationale(signals)], [0], [0], [signals])

    return [
        item("g2", "gaulois", "1887-03-01", _signals(1, "warm_start", 3)),
        item("d1", "debats", "1887-02-25", _signals(3, "warm_start", 1)),
        item("i2", "intran", "1887-02-26", _signals(1, "warm_start", 3)),
        item("g1", "gaulois", "1887-05-01", _signals(1, "dense", 1)),
    ]


def _stated(signals: VerdictSignals) -> str:
    return OfflinePolicy().rationale(Q, "accept", signals, [])


def test_offline_ranker_prefers_rank_overlap_and_dated_corroboration():
    order = OfflinePolicy().rank_group(RankContext("q", 1, _items(_stated)), []).order
    # The lead first; of the two rank-3 sources, the one dated next to the lead comes first.
    assert order == ["d1", "i2", "g2", "g1"]


def test_rewording_the_rationales_changes_no_ranking():
    policy = OfflinePolicy()
    stated = policy.rank_group(RankContext("q", 1, _items(_stated)), []).order
    reworded = policy.rank_group(
        RankContext("q", 1, _items(lambda s: "une autre formulation, sans aucun chiffre")),
        []).order
    misleading = policy.rank_group(
        RankContext("q", 1, _items(lambda s: "q-terms 4/4; warm start #1; channels bm25#1")),
        []).order
    assert stated == reworded == misleading == ["d1", "i2", "g2", "g1"]


class RewordingPolicy(OfflinePolicy):
    """The offline policy with every rationale written differently."""

    def rationale(self, question, verdict, signals, named, on_day=False) -> str:
        return f"pertinent ({signals.batch_rank}) — formulation libre"

    def reevaluate_held(self, ctx, calls):
        output = super().reevaluate_held(ctx, calls)
        promotions = [p.model_copy(update={"rationale": "reformulé"}) for p in output.promotions]
        return output.model_copy(update={"promotions": promotions})


# Two more articles on the question, so that some chunks are held and promoted later.
MORE = [chunk(11, 11, "gaulois:4", "gaulois", "1887-02-27",
              "Le droit sur les céréales: M. Lejeune le défend encore."),
        chunk(12, 12, "intran:3", "intran", "1887-02-28",
              "M. Lejeune et le droit sur les céréales, la presse se moque.")]


@pytest.mark.parametrize("settings", [{}, {"accept_rank": 1}, {"max_accepted": 1}])
def test_rewording_the_rationales_changes_no_decision_of_a_whole_run(settings):
    retriever = InMemoryRetriever(make_chunks() + MORE, INFOS)
    runs = []
    for policy in (OfflinePolicy(**settings), RewordingPolicy(**settings)):
        sink = ListSink()
        result = run_investigation(Q, policy=policy, retriever=retriever, sink=sink)
        verdicts = [(e.chunk_id, e.verdict, e.source, e.signals) for e in sink.of("verdict")]
        runs.append((result.ranked_document_keys, result.held_document_keys, verdicts))
    assert runs[0] == runs[1]
    assert runs[0][0]


EXPULSION = ("Quelle mesure la Chambre des députés a-t-elle discutée au sujet de l'expulsion des "
             "princes, et comment la presse l'a-t-elle rapportée ?")


@pytest.mark.parametrize("question", [
    EXPULSION,
    "En 1887, entre L'Intransigeant et Le Gaulois, lequel critique M. Lejeune ?",
    "Qui parle des sucres en mai 1887 ?",
    "Que dit M. Ribot à la Chambre, et comment la presse réagit-elle ?",
])
def test_offline_sub_questions_are_distinct_and_not_the_clauses_swapped(question):
    plan = offline_plan(question, INFOS, 5, None)
    texts = [sq.text for sq in plan]
    assert len(set(texts)) == len(texts) >= 2, texts
    question_clauses = sorted(p.strip(" ,?") for p in question.split(", et "))
    for text in texts:
        assert sorted(p.strip(" ,?") for p in text.split(" ; ")) != question_clauses or \
            len(question_clauses) == 1


def test_offline_sub_questions_target_the_debate_side_and_the_press_side():
    plan = {sq.target_sub_corpus: sq.text for sq in offline_plan(EXPULSION, INFOS, 5, None)}
    assert set(plan) == {"debats", "gaulois", "intran"}
    # The debate side asks what the Chamber discussed, and nothing about the press.
    assert "expulsion des princes" in plan["debats"] and "presse" not in plan["debats"]
    # Each paper is asked how it reported the same topic.
    # Each paper is asked how it reported the same measure, the pronoun replaced by it.
    assert plan["gaulois"] == ("Comment Le Gaulois a-t-il rapporté la mesure au sujet de "
                               "l'expulsion des princes ?")
    assert plan["intran"] == ("Comment L'Intransigeant a-t-il rapporté la mesure au sujet de "
                              "l'expulsion des princes ?")


@pytest.mark.parametrize(("question", "expected"), [
    ("En 1887, comment Le Gaulois et L'Intransigeant jugeaient-ils le général Boulanger ?",
     {"gaulois": "En 1887, comment Le Gaulois jugeait-il le général Boulanger ?",
      "intran": "En 1887, comment L'Intransigeant jugeait-il le général Boulanger ?"}),
    ("Entre L'Intransigeant et Le Gaulois, lequel ignore la présence du général Boulanger et "
     "lequel la met en avant ?",
     {"intran": "L'Intransigeant ignore-t-il la présence du général Boulanger ou la met-il en "
                "avant ?",
      "gaulois": "Le Gaulois ignore-t-il la présence du général Boulanger ou la met-il en "
                 "avant ?"}),
    ("Que disent la Chambre et la presse du discours de M. Lejeune ?",
     {"debats": "Que dit la Chambre du discours de M. Lejeune ?",
      "gaulois": "Que dit Le Gaulois du discours de M. Lejeune ?",
      "intran": "Que dit L'Intransigeant du discours de M. Lejeune ?"}),
    ("En 1887, lequel, L'Intransigeant ou Le Gaulois, critique le plus M. Lejeune ?",
     {"intran": "En 1887, L'Intransigeant critique-t-il le plus M. Lejeune ?",
      "gaulois": "En 1887, Le Gaulois critique-t-il le plus M. Lejeune ?"}),
    ("Quel argument M. Rouvier avance-t-il contre le droit sur les céréales, et comment la "
     "presse résume-t-elle sa position politique ?",
     {"debats": "Quel argument M. Rouvier avance-t-il contre le droit sur les céréales ?",
      "gaulois": "Comment Le Gaulois résume-t-il la position politique de M. Rouvier ?",
      "intran": "Comment L'Intransigeant résume-t-il la position politique de M. Rouvier ?"}),
    ("Quel journal dramatise davantage la disette et lequel adopte un ton plus neutre ?",
     {"gaulois": "Le Gaulois dramatise-t-il davantage la disette ou adopte-t-il un ton plus "
                 "neutre ?",
      "intran": "L'Intransigeant dramatise-t-il davantage la disette ou adopte-t-il un ton "
                "plus neutre ?"}),
])
def test_offline_sub_questions_restore_subject_verb_and_object(question, expected):
    plan = {sq.target_sub_corpus: sq.text for sq in offline_plan(question, INFOS, 5, None)}
    assert plan == expected


@pytest.mark.parametrize("question", [
    "Boulanger", "?!…", "x" * 2000, "What did the press say about General Boulanger in 1887?",
    "La loi militaire", "« Comment la presse a-t-elle jugé M. Ribot ?", "« » ( ) ; , ?",
    "Comment Le Gaulois et L'Intransigeant ont-ils jugé M. Ribot, et lequel l'a approuvé ?",
])
def test_any_question_gets_well_formed_distinct_sub_questions(question):
    from agent.engine.plan_check import check_plan, well_formed

    plan = offline_plan(question, INFOS, 5, None)
    texts = [sq.text for sq in plan]
    assert texts
    problems = [f for f in check_plan(question, texts) if f.index is not None]
    if well_formed(question):
        assert problems == [], texts


def _held(chunk_id: int, key: str, text: str, signals: VerdictSignals | None,
          auto: bool = False):
    from agent.engine.types import HeldChunk

    return HeldChunk(hit=chunk(chunk_id, chunk_id, key, "debats", "1887-02-26", text),
                     rationale="à vérifier", auto_held=auto, order=chunk_id, signals=signals)


def _held_signals(rank: int, *, names: int = 0, passage: int = 2, sentence: int = 2,
                  terms: tuple[str, ...] = ("droit", "cereales"),
                  forms: tuple[str, ...] = ("droit", "céréales")) -> VerdictSignals:
    return VerdictSignals(query_terms=4, matched_terms=terms, found_by="bm25", batch_rank=rank,
                          matched_forms=forms, sentence_terms=sentence, passage_terms=passage,
                          names_found=names)


def test_held_chunks_with_decisive_signals_are_promoted_strongest_first_while_there_is_room():
    from agent.engine.policy import HeldContext
    from agent.engine.types import Memory, SubQuestionSpec

    text = "M. Lejeune défend le droit sur les céréales devant la Chambre."
    held = [
        # Held for its rank only: two question words in one sentence, the person named.
        _held(1, "debats:1", text, _held_signals(6, names=1)),
        # Also decisive, weaker (no name), so it comes after the first.
        _held(2, "debats:2", "Le droit sur les céréales reste en débat.", _held_signals(3)),
        # Words scattered over the chunk: not decisive, stays held.
        _held(3, "debats:3", "Le droit. Plus loin, les céréales.",
              _held_signals(1, passage=1, sentence=1)),
        # Held by the engine (a widened window), with no signals of its own: stays held.
        _held(4, "debats:4", text, None, auto=True),
    ]
    sub_question = SubQuestionSpec("Que dit M. Lejeune du droit sur les céréales ?", "debats",
                                   ("M. Lejeune",))
    ctx = HeldContext(question=sub_question.text, index=0, sub_question=sub_question,
                      memory=Memory(), accepted=[], held=held)

    promoted = OfflinePolicy().reevaluate_held(ctx, []).promotions
    assert [p.chunk_id for p in promoted] == [1, 2]
    assert promoted[0].signals == held[0].signals  # it ranks by its own figures
    assert "M. Lejeune" in promoted[0].rationale and "« céréales »" in promoted[0].rationale

    # No room left in the sub-question: only the strongest is promoted.
    room_for_one = OfflinePolicy(max_accepted=1).reevaluate_held(ctx, []).promotions
    assert [p.chunk_id for p in room_for_one] == [1]


def test_a_full_sub_question_takes_a_few_held_chunks_stronger_than_its_weakest_source():
    from agent.engine.policy import HeldContext
    from agent.engine.types import AcceptedChunk, Memory, SubQuestionSpec

    weak = _held_signals(1, passage=2, sentence=2)
    accepted = [AcceptedChunk(chunk_id=10 + n, document_key=f"debats:a{n}", sub_corpus="debats",
                              rationale="", source="agent", signals=weak) for n in range(2)]
    text = "M. Lejeune défend le droit sur les céréales devant la Chambre."
    held = [_held(n, f"debats:{n}", text, _held_signals(n, names=1, passage=3, sentence=3))
            for n in (1, 2, 3)]
    held.append(_held(4, "debats:4", text, _held_signals(1)))  # no stronger than the weakest
    sub_question = SubQuestionSpec("Que dit M. Lejeune du droit sur les céréales ?", "debats",
                                   ("M. Lejeune",))
    ctx = HeldContext(question=sub_question.text, index=0, sub_question=sub_question,
                      memory=Memory(), accepted=accepted, held=held)

    full = OfflinePolicy(max_accepted=2, extra_accepted=2).reevaluate_held(ctx, []).promotions
    assert [p.chunk_id for p in full] == [1, 2]
    no_extra = OfflinePolicy(max_accepted=2, extra_accepted=0).reevaluate_held(ctx, [])
    assert no_extra.promotions == []
