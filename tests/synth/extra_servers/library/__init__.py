"""A three-tool `library` server for the synthesis tests (PROVE_SERVER_PATH=tests/synth/extra_servers):
its chains all start with list_books, which takes nothing the user must supply."""

from __future__ import annotations

import random

from pydantic import Field

from prove.env.helpers import lookup, require
from prove.env.registry import ServerSpec
from prove.env.state import Counter, Record, ServerState
from prove.env.tool import tool
from prove.env.types import DEFAULT_LIMIT, Limit, Offset, Page, entity_id

BookId = entity_id("book", "Book id, e.g. 'BOOK-0001'.")
LoanId = entity_id("loan", "Loan id, e.g. 'LOAN-0001'.")


class Book(Record):
    book_id: BookId
    title: str
    on_loan: bool


class Loan(Record):
    loan_id: LoanId
    book_id: BookId
    returned: bool


class LibraryState(ServerState):
    books: dict[str, Book] = Field(default_factory=dict)
    loans: dict[str, Loan] = Field(default_factory=dict)


def initial_state(seed: int) -> LibraryState:
    """Eight books, none on loan; deterministic in `seed`."""
    rng = random.Random(seed)
    state = LibraryState(now="2026-03-16T09:00")
    book_id = Counter("BOOK")
    for word in rng.sample(["Tides", "Ember", "Quartz", "Harbor", "Lantern", "Meadow", "Cipher",
                            "Orchard", "Summit", "Willow"], 8):
        bid = book_id()
        state.books[bid] = Book(book_id=bid, title=f"The {word}", on_loan=False)
    return state


class BookList(Page):
    books: list[Book]


@tool()
def list_books(state: LibraryState, offset: Offset = 0, limit: Limit = DEFAULT_LIMIT) -> BookList:
    """List the library's books, a page at a time."""
    return BookList.of(sorted(state.books.values(), key=lambda b: b.book_id), offset, limit)


@tool(write=True, sensitive=("book_id",))
def borrow_book(state: LibraryState, book_id: BookId) -> Loan:
    """Borrow a book that is not on loan."""
    book = lookup(state.books, book_id, "book_id", "book")
    require(not book.on_loan, f"book '{book_id}' is on loan (parameter 'book_id')")
    book.on_loan = True
    loan = Loan(loan_id=state.new_id("LOAN"), book_id=book_id, returned=False)
    state.loans[loan.loan_id] = loan
    return loan


@tool(write=True, sensitive=("loan_id",))
def return_book(state: LibraryState, loan_id: LoanId) -> Loan:
    """Return a borrowed book."""
    loan = lookup(state.loans, loan_id, "loan_id", "loan")
    require(not loan.returned, f"loan '{loan_id}' is already returned (parameter 'loan_id')")
    loan.returned = True
    state.books[loan.book_id].on_loan = False
    return loan


SERVER = ServerSpec.build(
    name="library",
    family="knowledge",
    description="Library: books to borrow and return.",
    state_model=LibraryState,
    initial_state=initial_state,
    tools_module=[list_books, borrow_book, return_book],
)
