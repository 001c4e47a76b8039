from __future__ import annotations

from common.usage import TokenUsage


def test_usages_add_up_count_by_count():
    total = TokenUsage(10, 2, 1) + TokenUsage(5, 3)
    assert total == TokenUsage(input_tokens=15, output_tokens=5, cached_tokens=1)
    assert TokenUsage.total([TokenUsage(1, 1, 1)] * 3) == TokenUsage(3, 3, 3)
    assert TokenUsage.total([]) == TokenUsage()


def test_the_stored_flat_counts_read_back_and_missing_ones_are_zero():
    usage = TokenUsage(7, 4, 2)
    assert usage.as_fields() == {"input_tokens": 7, "output_tokens": 4, "cached_tokens": 2}
    assert TokenUsage.from_fields(usage.as_fields()) == usage
    assert TokenUsage.from_fields({"input_tokens": 9, "cached_tokens": None}) == TokenUsage(9)
