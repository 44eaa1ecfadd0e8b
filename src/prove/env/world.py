"""The seeded world vocabulary for `initial_state(seed)` builders: people, places, dates, money.

Every helper takes the builder's own `random.Random`; nothing here touches global randomness.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

__all__ = [
    "FIRST_NAMES", "LAST_NAMES", "CITIES", "COMPANIES", "STREETS",
    "person", "email", "phone", "money", "iso", "shift", "days_before", "slug",
]

FIRST_NAMES = (
    "Amara", "Bastian", "Chloe", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonah",
    "Kavya", "Liam", "Mei", "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Samir", "Tara", "Uma",
    "Victor", "Wen", "Ximena", "Yusuf", "Zoe", "Aiden", "Beatriz", "Caleb", "Daria", "Emeka",
    "Freya", "Gabriel", "Hana", "Ivan", "Julia", "Kofi", "Leila", "Mateo", "Nadia",
)
LAST_NAMES = (
    "Abara", "Bauer", "Chen", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito",
    "Jensen", "Kowalski", "Lopez", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero",
    "Rossi", "Silva", "Tanaka", "Ulrich", "Varga", "Weber", "Xu", "Yilmaz", "Zielinski",
    "Andersson", "Becker", "Costa", "Delgado", "Evans", "Fontaine", "Gupta", "Horvat",
)
CITIES = (
    "Amsterdam", "Austin", "Barcelona", "Berlin", "Boston", "Chicago", "Copenhagen", "Denver",
    "Dublin", "Edinburgh", "Lisbon", "London", "Los Angeles", "Madrid", "Milan", "Montreal",
    "Munich", "New York", "Oslo", "Paris", "Prague", "Rome", "San Francisco", "Seattle",
    "Singapore", "Stockholm", "Sydney", "Tokyo", "Toronto", "Vienna", "Warsaw", "Zurich",
)
COMPANIES = (
    "Acme Analytics", "Birchwood Labs", "Cobalt Systems", "Driftwood Media", "Evergreen Foods",
    "Fjord Logistics", "Granite Health", "Harbor Finance", "Ionic Energy", "Juniper Retail",
    "Kestrel Aviation", "Lumen Studios", "Meridian Legal", "Northwind Traders", "Orchid Bio",
    "Pinnacle Sports", "Quartz Robotics", "Redwood Realty", "Summit Outdoors", "Tidal Water",
)
STREETS = (
    "Oak Street", "Maple Avenue", "Harbor Road", "Station Square", "Mill Lane", "Park Row",
    "King Street", "Elm Court", "River Walk", "Church Road", "High Street", "Cedar Drive",
)


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "." for ch in text.lower()).strip(".")


def email(name: str, domain: str = "example.com") -> str:
    return f"{slug(name)}@{domain}"


def phone(rng: random.Random) -> str:
    return f"+1-555-{rng.randrange(100, 1000)}-{rng.randrange(1000, 10000)}"


def money(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def iso(dt: datetime) -> str:
    return dt.isoformat(timespec="minutes")


def shift(when: str, days: float = 0, hours: float = 0, minutes: float = 0) -> str:
    """`when` moved by `days`, `hours` and `minutes` (negative moves back), in `when`'s own format.

    A date (YYYY-MM-DD) stays a date and moves by whole days only (ValueError otherwise: give it
    a time, f"{day}T09:00"); a time YYYY-MM-DDTHH:MM stays at minutes (a fraction of a minute is
    dropped, as `iso` does), one with seconds keeps them.
    """
    delta = timedelta(days=days, hours=hours, minutes=minutes)
    if len(when) == 10:
        if delta % timedelta(days=1):
            raise ValueError(f"a date moves by whole days only; got {delta} for '{when}' "
                             f"(give it a time, e.g. '{when}T09:00')")
        return (date.fromisoformat(when) + delta).isoformat()
    moved = datetime.fromisoformat(when) + delta
    return moved.isoformat(timespec="minutes" if len(when) == 16 else "seconds")


def days_before(now: str, rng: random.Random, max_days: int, min_days: int = 0) -> str:
    """A random time between `max_days` and `min_days` before `now` (ISO, minute precision)."""
    base = datetime.fromisoformat(now)
    delta = timedelta(minutes=rng.randrange(min_days * 1440, max(max_days * 1440, min_days * 1440 + 1)))
    return iso(base - delta)
