"""The helpers tool bodies share: `Page.of` (a page in one call) and `world.shift` (moving a time)."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from prove.env.helpers import paginate
from prove.env.types import MAX_PAGE, Page
from prove.env.world import shift


class Item(BaseModel):
    n: int


class ItemList(Page):
    items: list[Item]


class Labelled(Page):
    label: str
    tags: list[str]
    rows: list[str]


class Empty(Page):
    label: str


ITEMS = [Item(n=i) for i in range(5)]


def test_of_fills_the_list_field_total_and_next_offset() -> None:
    page = ItemList.of(ITEMS, 1, 2)
    assert page.model_dump() == {"total": 5, "next_offset": 3, "items": [{"n": 1}, {"n": 2}]}
    assert ItemList.of(ITEMS, 3, 2).next_offset is None
    assert ItemList.of(ITEMS, 9, 2).model_dump() == {"total": 5, "next_offset": None, "items": []}


def test_of_views_only_the_page_and_passes_the_other_fields() -> None:
    seen: list[int] = []

    def view(item: Item) -> str:
        seen.append(item.n)
        return f"#{item.n}"

    page = Labelled.of(ITEMS, 2, 2, view=view, label="x", tags=["a"])
    assert seen == [2, 3]
    assert page.model_dump() == {"total": 5, "next_offset": 4, "label": "x", "tags": ["a"],
                                 "rows": ["#2", "#3"]}


def test_of_matches_paginate_byte_for_byte() -> None:
    for offset in range(0, 7):
        for limit in (1, 2, 5, MAX_PAGE):
            items, nxt = paginate(ITEMS, offset, limit)
            built = ItemList(items=items, total=len(ITEMS), next_offset=nxt)
            assert ItemList.of(ITEMS, offset, limit).model_dump_json() == built.model_dump_json()


@pytest.mark.parametrize(("offset", "limit", "message"), [
    (-1, 5, "offset must be >= 0, got -1"),
    (0, 0, f"limit must be between 1 and {MAX_PAGE}, got 0"),
    (0, MAX_PAGE + 1, f"limit must be between 1 and {MAX_PAGE}, got {MAX_PAGE + 1}"),
])
def test_of_refuses_a_bad_offset_or_limit_as_paginate_does(offset: int, limit: int, message: str) -> None:
    for call in (lambda: ItemList.of(ITEMS, offset, limit), lambda: paginate(ITEMS, offset, limit)):
        with pytest.raises(ToolError) as err:
            call()
        assert str(err.value) == message


def test_of_names_the_list_fields_when_it_cannot_choose() -> None:
    with pytest.raises(TypeError, match=r"Labelled has several \(tags, rows\)"):
        Labelled.of(ITEMS, 0, 2, label="x")
    with pytest.raises(TypeError, match="Empty has none"):
        Empty.of(ITEMS, 0, 2, label="x")
    with pytest.raises(TypeError, match="Labelled has none"):
        Labelled.of(ITEMS, 0, 2, label="x", tags=[], rows=[])


@pytest.mark.parametrize(("when", "moves", "expected"), [
    ("2026-03-16T09:00", {"minutes": 90}, "2026-03-16T10:30"),
    ("2026-03-16T09:00", {"days": -1, "hours": -2}, "2026-03-15T07:00"),
    ("2026-03-16T09:00", {"minutes": 0.7}, "2026-03-16T09:00"),
    ("2026-03-16T23:30", {"hours": 1}, "2026-03-17T00:30"),
    ("2026-03-16T09:00:05", {"hours": -1}, "2026-03-16T08:00:05"),
    ("2026-03-16", {"days": 20}, "2026-04-05"),
    ("2026-03-16", {"hours": -48}, "2026-03-14"),
    ("2026-03-16", {}, "2026-03-16"),
])
def test_shift_keeps_the_format_it_was_given(when: str, moves: dict[str, float], expected: str) -> None:
    assert shift(when, **moves) == expected


def test_shift_refuses_to_move_a_date_by_part_of_a_day() -> None:
    with pytest.raises(ValueError, match=r"whole days only; got 9:00:00 for '2026-03-16'.*'2026-03-16T09:00'"):
        shift("2026-03-16", hours=9)
