"""Two tiny tools of a `notes` server, for prompts short enough for a CPU-served model in tests."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.state import ServerState
from prove.env.tool import ToolSpec, tool


class Note(BaseModel):
    note_id: str
    text: str


class NoteList(BaseModel):
    notes: list[Note]


@tool()
def search_notes(state: ServerState,
                 query: Annotated[str, Field(description="Words to find.")]) -> NoteList:
    """Find notes containing some words."""
    raise NotImplementedError


@tool(write=True, sensitive=("note_id",))
def archive_note(state: ServerState,
                 note_id: Annotated[str, Field(description="Note id, e.g. 'NOTE-0001'.")]) -> Note:
    """Archive one note."""
    raise NotImplementedError


SEARCH = ToolSpec.from_function(search_notes, "notes")
ARCHIVE = ToolSpec.from_function(archive_note, "notes")
