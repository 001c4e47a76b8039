"""Run TRACE investigations without any web framework: ports in, events out."""

from agent.engine.config import EngineConfig
from agent.engine.events import Event, event_from_json
from agent.engine.investigation import run_investigation
from agent.engine.llm_policy import LLMPolicy
from agent.engine.offline import OfflinePolicy
from agent.engine.parsing import OutputParseError, OutputSchemaError, parse_json_object
from agent.engine.policy import Policy
from agent.engine.policy_spec import PolicyKind, PolicySpec
from agent.engine.ports import ChatModel, EventSink, Retriever
from agent.engine.prompting import Prompt
from agent.engine.replay import RecordedCall, RecordingChatModel, ReplayChatModel
from agent.engine.schemas import (
    AgentStep,
    Briefing,
    ChunkDecision,
    HeldReevalOutput,
    PlannerOutput,
    RankOutput,
    ReplanOutput,
)
from agent.engine.sinks import ListSink
from agent.engine.types import (
    AcceptedChunk,
    ChatResult,
    InvestigationResult,
    SubQuestionSpec,
    VerdictSignals,
)

__all__ = [
    "AcceptedChunk", "AgentStep", "Briefing", "ChatModel", "ChatResult", "ChunkDecision",
    "EngineConfig", "Event", "EventSink", "HeldReevalOutput", "InvestigationResult", "LLMPolicy",
    "ListSink", "OfflinePolicy", "OutputParseError", "OutputSchemaError", "PlannerOutput",
    "Policy", "PolicyKind", "PolicySpec", "Prompt", "RankOutput", "RecordedCall",
    "RecordingChatModel", "ReplanOutput", "ReplayChatModel", "Retriever", "SubQuestionSpec",
    "VerdictSignals",
    "event_from_json", "parse_json_object", "run_investigation",
]  # fmt: skip
