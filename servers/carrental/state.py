"""Car rental server state: branches, vehicles, customers, rentals, damage reports, ride requests."""

from __future__ import annotations

import random
import zlib
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, day, entity_id, moment, naming
from prove.env.world import CITIES, FIRST_NAMES, LAST_NAMES, STREETS, email, iso, person, phone

VehicleClass = Literal["economy", "compact", "midsize", "suv", "van", "luxury"]
Transmission = Literal["automatic", "manual"]
Fuel = Literal["petrol", "diesel", "hybrid", "electric"]
VehicleStatus = Literal["available", "rented", "maintenance"]
RentalStatus = Literal["reserved", "active", "returned", "cancelled"]
Extra = Literal["gps", "child_seat", "extra_driver", "insurance_full"]
LoyaltyTier = Literal["none", "silver", "gold"]
DamageArea = Literal["front", "rear", "left_side", "right_side", "windshield", "roof", "wheels", "interior"]
DamageSeverity = Literal["minor", "major"]
RideType = Literal["standard", "xl", "premium"]
RideStatus = Literal["requested", "driver_assigned", "in_progress", "completed", "cancelled"]

EXTRA_DAILY: dict[str, float] = {"gps": 8.0, "child_seat": 6.0, "extra_driver": 12.0, "insurance_full": 25.0}
"""Price per rental day of each extra, USD."""
LOYALTY_DISCOUNT: dict[str, float] = {"none": 0.0, "silver": 0.05, "gold": 0.10}
"""Share of the base price (days x daily rate) taken off for loyalty members."""
MIN_AGE = 21
RESTRICTED_CLASSES: tuple[str, ...] = ("van", "luxury")
RESTRICTED_MIN_AGE = 25
ONE_WAY_CLASSES: tuple[str, ...] = ("economy", "compact", "midsize", "suv")
"""Classes that may be returned to a branch in another city."""
ONE_WAY_FEE = 90.0
MAX_RENTAL_DAYS = 28
FREE_CANCEL_HOURS = 24
"""Cancelling a reservation later than this before pickup costs one day's rate."""
PICKUP_EARLY_MINUTES = 60
"""How long before the reserved pickup time the car can be collected."""
NO_SHOW_HOURS = 24
LATE_GRACE_MINUTES = 59
DAMAGE_CHARGE: dict[str, float] = {"minor": 150.0, "major": 900.0}
"""Charged for reported damage unless the rental has the insurance_full extra."""
RIDE_BASE: dict[str, float] = {"standard": 3.0, "xl": 5.0, "premium": 8.0}
RIDE_PER_KM: dict[str, float] = {"standard": 1.2, "xl": 1.8, "premium": 2.6}
RIDE_SEATS: dict[str, int] = {"standard": 4, "xl": 6, "premium": 4}
RIDE_CANCEL_FEE = 5.0
"""Charged when a ride is cancelled after a driver was assigned."""

BranchId = entity_id("branch", "Rental branch id, e.g. 'BRN-0002' (from list_rental_branches).", example="BRN-0002")
VehicleId = entity_id("vehicle", "Vehicle id, e.g. 'VEH-0012' (from search_rental_cars).", example="VEH-0012")
CustomerId = entity_id("customer", "Rental customer id, e.g. 'RCU-0004'.", example="RCU-0004")
CustomerEmail = entity_id("customer_email", "A rental customer's email, e.g. 'ada.chen@drive.example.com'.", example="ada.chen@drive.example.com")
RentalId = entity_id("rental", "Car rental id, e.g. 'RNT-0031'.", example="RNT-0031")
ReportId = entity_id("damage_report", "Damage report id, e.g. 'DMG-0003'.", example="DMG-0003")
RideId = entity_id("ride", "Ride id, e.g. 'RID-0007'.", example="RID-0007")


class Branch(Record):
    branch_id: BranchId
    name: str = Field(json_schema_extra=naming("name"))
    city: str
    address: str
    airport: bool = Field(description="Whether the branch is at an airport.")
    opens: str = Field(description="Opening time, HH:MM.")
    closes: str = Field(description="Closing time, HH:MM; pickups and returns happen in between.")
    phone: str


class Vehicle(Record):
    vehicle_id: VehicleId
    plate: str
    make: str
    model: str
    year: int
    vehicle_class: VehicleClass
    seats: int
    transmission: Transmission
    fuel: Fuel
    daily_rate: float = Field(description="USD per rental day (24 hours).")
    branch_id: BranchId = Field(description="Branch where the car currently is.")
    status: VehicleStatus
    mileage: int = Field(description="Odometer, km.")


class RentalCustomer(Record):
    customer_id: CustomerId
    name: str = Field(json_schema_extra=naming("alone"))
    email: CustomerEmail
    phone: str
    age: int
    license_number: str
    license_expiry: day("Driving licence expiry date.")
    loyalty_tier: LoyaltyTier


class Rental(Record):
    rental_id: RentalId
    customer_id: CustomerId
    vehicle_id: VehicleId
    pickup_branch_id: BranchId
    return_branch_id: BranchId
    pickup_at: moment("Reserved pickup time.")
    return_at: moment("Reserved return time.")
    days: int
    extras: list[Extra] = Field(default_factory=list, description="Booked extras, sorted.")
    status: RentalStatus
    daily_rate: float
    base_price: float = Field(json_schema_extra={MONEY: True})
    discount: float
    extras_price: float = Field(json_schema_extra={MONEY: True})
    one_way_fee: float = Field(json_schema_extra={MONEY: True})
    late_fee: float = Field(0.0, json_schema_extra={MONEY: True})
    damage_charges: float = 0.0
    cancellation_fee: float = Field(0.0, json_schema_extra={MONEY: True})
    total_price: float = Field(json_schema_extra={MONEY: True}, description="Everything charged for the rental, USD.")
    start_mileage: int | None = None
    end_mileage: int | None = None
    mileage_driven: int | None = None
    picked_up_at: str | None = None
    returned_at: str | None = None
    created_at: str


class DamageReport(Record):
    report_id: ReportId
    rental_id: RentalId
    vehicle_id: VehicleId
    area: DamageArea
    severity: DamageSeverity
    description: str
    charge: float
    reported_at: str


class Ride(Record):
    ride_id: RideId
    customer_id: CustomerId
    city: str
    pickup_address: str
    dropoff_address: str
    ride_type: RideType
    passengers: int
    distance_km: float
    fare_estimate: float = Field(json_schema_extra={MONEY: True})
    status: RideStatus
    driver_name: str | None = None
    eta_minutes: int | None = Field(None, description="Minutes until the driver arrives, while one is on the way.")
    cancellation_fee: float = Field(0.0, json_schema_extra={MONEY: True})
    requested_at: str


class CarRentalState(ServerState):
    branches: dict[str, Branch] = Field(default_factory=dict)
    vehicles: dict[str, Vehicle] = Field(default_factory=dict)
    customers: dict[str, RentalCustomer] = Field(default_factory=dict)
    rentals: dict[str, Rental] = Field(default_factory=dict)
    damage_reports: dict[str, DamageReport] = Field(default_factory=dict)
    rides: dict[str, Ride] = Field(default_factory=dict)


def norm_address(text: str) -> str:
    return " ".join(text.lower().replace(",", " ").split())


def ride_route(city: str, pickup: str, dropoff: str) -> tuple[float, int]:
    """Deterministic (distance km, driver ETA minutes) for a route: the simulated map."""
    a, b = sorted((norm_address(pickup), norm_address(dropoff)))
    h = zlib.crc32(f"{city.lower()}|{a}|{b}".encode())
    return round(2.0 + (h % 3300) / 100, 1), 2 + (h >> 12) % 12


def ride_fare(ride_type: str, distance_km: float) -> float:
    return round(RIDE_BASE[ride_type] + RIDE_PER_KM[ride_type] * distance_km, 2)


def driver_for(key: str) -> str:
    h = zlib.crc32(key.encode())
    return f"{FIRST_NAMES[h % len(FIRST_NAMES)]} {LAST_NAMES[(h >> 8) % len(LAST_NAMES)]}"


_MODELS: dict[str, tuple[tuple[str, str, int, Transmission, Fuel], ...]] = {
    "economy": (("Toyota", "Yaris", 5, "manual", "petrol"), ("Fiat", "Panda", 4, "manual", "petrol"),
                ("Renault", "Zoe", 5, "automatic", "electric")),
    "compact": (("Volkswagen", "Golf", 5, "manual", "diesel"), ("Ford", "Focus", 5, "automatic", "petrol"),
                ("Toyota", "Corolla", 5, "automatic", "hybrid")),
    "midsize": (("Skoda", "Octavia", 5, "automatic", "diesel"), ("Tesla", "Model 3", 5, "automatic", "electric"),
                ("Mazda", "6", 5, "manual", "petrol")),
    "suv": (("Toyota", "RAV4", 5, "automatic", "hybrid"), ("Volvo", "XC60", 5, "automatic", "diesel"),
            ("Kia", "Sportage", 5, "manual", "petrol")),
    "van": (("Mercedes-Benz", "Vito", 8, "manual", "diesel"), ("Ford", "Transit Custom", 9, "manual", "diesel"),
            ("Volkswagen", "Multivan", 7, "automatic", "hybrid")),
    "luxury": (("BMW", "7 Series", 5, "automatic", "hybrid"), ("Mercedes-Benz", "S-Class", 5, "automatic", "petrol"),
               ("Porsche", "Taycan", 4, "automatic", "electric")),
}
_RATE = {"economy": 35, "compact": 45, "midsize": 60, "suv": 80, "van": 95, "luxury": 160}
_SITES = ("Airport", "Central Station", "Downtown", "Harbor")
_PLACES = ("Central Station", "City Museum", "Convention Center", "University Campus", "Old Town Square",
           "Stadium", "General Hospital", "Airport Terminal 1")


def rental_price(rental_days: int, rate: float, tier: str, extras: list[str], one_way: float) -> dict[str, float]:
    """Price fields of a rental: base (days x rate), loyalty discount, extras, one-way fee, total."""
    base = round(rate * rental_days, 2)
    discount = round(base * LOYALTY_DISCOUNT[tier], 2)
    extras_price = round(sum(EXTRA_DAILY[e] for e in extras) * rental_days, 2)
    return {"daily_rate": rate, "base_price": base, "discount": discount, "extras_price": extras_price,
            "one_way_fee": one_way, "total_price": round(base - discount + extras_price + one_way, 2)}


def initial_state(seed: int) -> CarRentalState:
    """~14 branches in 6 cities, ~100 cars, ~30 customers, ~80 rentals, ~30 rides; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-03-16T09:00"
    t0 = datetime.fromisoformat(now)
    state = CarRentalState(now=now)
    brn, veh, rcu = Counter("BRN"), Counter("VEH"), Counter("RCU")
    rnt, dmg, rid = Counter("RNT"), Counter("DMG"), Counter("RID")
    cities = rng.sample(CITIES, 6)
    for city in cities:
        for site in ["Airport", *rng.sample(_SITES[1:], rng.randrange(1, 3))]:
            bid = brn()
            airport = site == "Airport"
            state.branches[bid] = Branch(
                branch_id=bid, name=f"{city} {site}", city=city, airport=airport,
                address=f"{rng.randrange(1, 300)} {rng.choice(STREETS)}, {city}",
                opens="00:00" if airport else rng.choice(["07:00", "08:00"]),
                closes="23:59" if airport else rng.choice(["19:00", "20:00", "21:00"]), phone=phone(rng),
            )
            for _ in range(rng.randrange(5, 10)):
                cls = rng.choices(list(_MODELS), weights=[5, 5, 4, 4, 2, 2])[0]
                make, model, seats, gear, fuel = rng.choice(_MODELS[cls])
                vid = veh()
                state.vehicles[vid] = Vehicle(
                    vehicle_id=vid, plate=f"{rng.choice('BKMRSTW')}{rng.choice('ACEHLN')}-{rng.randrange(1000, 10000)}",
                    make=make, model=model, year=rng.randrange(2020, 2026), vehicle_class=cls, seats=seats,
                    transmission=gear, fuel=fuel, daily_rate=float(_RATE[cls] + rng.randrange(0, 15)),
                    branch_id=bid, status="maintenance" if rng.random() < 0.08 else "available",
                    mileage=rng.randrange(3000, 90000),
                )
    for _ in range(rng.randrange(26, 34)):
        name = person(rng)
        cid = rcu()
        expiry = (t0 + timedelta(days=rng.choice([rng.randrange(3, 40), rng.randrange(200, 3000)]))).date()
        state.customers[cid] = RentalCustomer(
            customer_id=cid, name=name, email=email(name, "drive.example.com"), phone=phone(rng),
            age=rng.choice([rng.randrange(21, 25), rng.randrange(25, 75), rng.randrange(25, 75)]),
            license_number=f"{rng.choice('ABDFGKLMNPRSTZ')}{rng.randrange(10**7, 10**8)}",
            license_expiry=expiry.isoformat(), loyalty_tier=rng.choices(["none", "silver", "gold"], weights=[5, 3, 1])[0],
        )
    customers, vehicles = list(state.customers.values()), list(state.vehicles.values())
    taken: dict[str, list[tuple[datetime, datetime]]] = {}
    for _ in range(rng.randrange(70, 90)):
        car, who = rng.choice(vehicles), rng.choice(customers)
        kind = rng.choices(["returned", "active", "reserved", "cancelled"], weights=[5, 1, 3, 1])[0]
        days = rng.randrange(1, 8)
        if kind == "returned":
            start = t0 - timedelta(days=rng.randrange(days + 1, 120))
        elif kind == "active":
            start = t0 - timedelta(days=rng.randrange(0, days + 2))  # some are overdue
        else:
            start = t0 + timedelta(days=rng.choice([0, 1, rng.randrange(2, 40)]))
        start = start.replace(hour=rng.randrange(9, 18), minute=rng.choice([0, 30]))
        if kind == "active" and start >= t0:
            start -= timedelta(days=1)
        end = start + timedelta(days=days)
        busy = kind != "cancelled"
        if busy and (car.status == "maintenance" and kind == "active" or
                     any(s < end and start < e for s, e in taken.get(car.vehicle_id, []))):
            continue
        if kind in ("reserved", "active") and (who.age < RESTRICTED_MIN_AGE and car.vehicle_class in RESTRICTED_CLASSES
                                               or who.license_expiry < end.date().isoformat()):
            continue
        if busy:
            taken.setdefault(car.vehicle_id, []).append((start, end))
        home = state.branches[car.branch_id]
        back = home.branch_id
        if kind == "reserved" and car.vehicle_class in ONE_WAY_CLASSES and rng.random() < 0.15:
            back = rng.choice([b.branch_id for b in state.branches.values() if b.city == home.city])
        extras = sorted(rng.sample(list(EXTRA_DAILY), rng.choice([0, 0, 1, 2])))
        money = rental_price(days, car.daily_rate, who.loyalty_tier, extras, 0.0)
        driven = rng.randrange(40, 250) * days
        end_km = car.mileage - rng.randrange(0, 3000)
        rental_id = rnt()
        state.rentals[rental_id] = Rental(
            rental_id=rental_id, customer_id=who.customer_id, vehicle_id=car.vehicle_id,
            pickup_branch_id=home.branch_id, return_branch_id=back, pickup_at=iso(start), return_at=iso(end),
            days=days, extras=extras, status=kind, **money,
            start_mileage=end_km - driven if kind == "returned" else car.mileage if kind == "active" else None,
            end_mileage=end_km if kind == "returned" else None,
            mileage_driven=driven if kind == "returned" else None,
            picked_up_at=iso(start) if kind in ("active", "returned") else None,
            returned_at=iso(end) if kind == "returned" else None,
            created_at=iso(min(start, t0) - timedelta(days=rng.randrange(1, 30))),
        )
        if kind == "active":
            car.status = "rented"
        if kind == "cancelled":
            state.rentals[rental_id].total_price = 0.0
        if kind == "returned" and rng.random() < 0.12:
            sev = rng.choice(["minor", "minor", "major"])
            report_id = dmg()
            charge = 0.0 if "insurance_full" in extras else DAMAGE_CHARGE[sev]
            state.damage_reports[report_id] = DamageReport(
                report_id=report_id, rental_id=rental_id, vehicle_id=car.vehicle_id,
                area=rng.choice(["front", "rear", "left_side", "right_side", "windshield"]), severity=sev,
                description=rng.choice(["scratch on the paint", "dent after parking", "cracked glass"]),
                charge=charge, reported_at=iso(end),
            )
            rental = state.rentals[rental_id]
            rental.damage_charges = charge
            rental.total_price = round(rental.total_price + charge, 2)
    open_ride: list[str] = []
    for _ in range(rng.randrange(25, 35)):
        who = rng.choice(customers)
        city = rng.choice(cities)
        pickup = rng.choice([f"{city} {rng.choice(_PLACES)}", f"{rng.randrange(1, 200)} {rng.choice(STREETS)}"])
        dropoff = f"{city} {rng.choice(_PLACES)}"
        if norm_address(pickup) == norm_address(dropoff):
            continue
        ride_type = rng.choices(["standard", "xl", "premium"], weights=[6, 2, 2])[0]
        status = rng.choices(["completed", "cancelled", "driver_assigned", "in_progress"], weights=[8, 2, 1, 1])[0]
        if status in ("driver_assigned", "in_progress"):
            if who.customer_id in open_ride:
                status = "completed"
            else:
                open_ride.append(who.customer_id)
        km, eta = ride_route(city, pickup, dropoff)
        ride_id = rid()
        when = t0 - timedelta(minutes=rng.randrange(5, 25) if status != "completed" else rng.randrange(60, 90 * 1440))
        state.rides[ride_id] = Ride(
            ride_id=ride_id, customer_id=who.customer_id, city=city, pickup_address=pickup, dropoff_address=dropoff,
            ride_type=ride_type, passengers=rng.randrange(1, RIDE_SEATS[ride_type] + 1), distance_km=km,
            fare_estimate=ride_fare(ride_type, km), status=status,
            driver_name=None if status == "cancelled" else driver_for(ride_id),
            eta_minutes=eta if status == "driver_assigned" else None, requested_at=iso(when),
        )
    return state
