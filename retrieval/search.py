"""One channel's search, as the agent and the search page ask for it."""

from __future__ import annotations

from common.search import Hit, SearchRequest
from retrieval import channels


def search(request: SearchRequest) -> list[Hit]:
    """Run the request's channel and return up to `request.limit` hits without passages.

    The date window filters every channel except the temporal one, which ranks by it (and
    raises ValueError without one). A blank query finds nothing on the text channels.
    """
    if request.channel != "temporal" and not request.query.strip():
        return []
    return channels.get(request.channel).search(request)
