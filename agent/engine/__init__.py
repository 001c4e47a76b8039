"""Run TRACE investigations without any web framework: ports in, events out."""

from agent.engine.config import EngineConfig
from agent.engine.investigation import run_investigation
from agent.engine.llm_policy import LLMPolicy
from agent.engine.offline import OfflinePolicy
from agent.engine.parsing import OutputParseError, OutputSchemaError, parse_json_object
from agent.engine.policy import Policy
from agent.engine.ports import ChatModel, EventSink, Retriever
from agent.engine.replay import RecordedCall, ReplayChatModel, recorded_calls
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    HeldReevalOutput,
    PlannerOutput,
    RankOutput,
    ReplanOutput,
    Verdict,
)
from agent.engine.types import (
    AcceptedChunk,
    Candidate,
    ChatResult,
    Event,
    InvestigationResult,
    SearchRequest,
    SubCorpusInfo,
    SubQuestion,
)

__all__ = [
    "AcceptedChunk", "AgentStep", "Briefing", "Candidate", "ChatModel", "ChatResult",
    "EngineConfig", "Event", "EventSink", "HeldReevalOutput", "InvestigationResult", "LLMPolicy",
    "OfflinePolicy", "OutputParseError", "OutputSchemaError", "PlannerOutput", "Policy",
    "RankOutput", "RecordedCall", "ReplanOutput", "ReplayChatModel", "Retriever", "SearchRequest",
    "SubCorpusInfo", "SubQuestion", "Verdict", "parse_json_object", "recorded_calls",
    "run_investigation",
]  # fmt: skip
