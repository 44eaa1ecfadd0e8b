"""Car rental tools: branches, car search and quotes, reservations, pickup/return, damage, rides."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    MONEY,
    Limit,
    Offset,
    Page,
    entity_id,
    entity_ids,
    measure,
    moment,
    parse_moment,
    text,
)
from prove.env.world import iso
from prove_servers.carrental.state import (
    DAMAGE_CHARGE,
    FREE_CANCEL_HOURS,
    LATE_GRACE_MINUTES,
    MAX_RENTAL_DAYS,
    MIN_AGE,
    NO_SHOW_HOURS,
    ONE_WAY_CLASSES,
    ONE_WAY_FEE,
    PICKUP_EARLY_MINUTES,
    RESTRICTED_CLASSES,
    RESTRICTED_MIN_AGE,
    RIDE_CANCEL_FEE,
    RIDE_SEATS,
    Branch,
    BranchId,
    CarRentalState,
    CustomerEmail,
    CustomerId,
    DamageArea,
    DamageReport,
    DamageSeverity,
    Extra,
    Fuel,
    Rental,
    RentalCustomer,
    RentalId,
    RentalStatus,
    Ride,
    RideId,
    RideType,
    Transmission,
    Vehicle,
    VehicleClass,
    VehicleId,
    driver_for,
    norm_address,
    rental_price,
    ride_fare,
    ride_route,
)

PickupAt = moment("Pickup time, not in the past.", listed="pickup_at")
ReturnAt = moment("Return time, after the pickup (at most 28 days).", listed="return_at", role="return")
ReturnBranch = Annotated[BranchId | None, Field(description="Branch to return the car to; default: the pickup branch.")]
Extras = Annotated[list[Extra] | None, Field(description="Extras to book: gps, child_seat, extra_driver, insurance_full.")]
City = text("word", "City where the ride happens, e.g. 'Berlin'.", listed="city", example="Berlin")
Address = text("word", "Street address or landmark.", listed="address", min_length=3, max_length=200)

_BUSY = ("reserved", "active")
_OPEN_RIDE = ("requested", "driver_assigned", "in_progress")


class BranchList(Page):
    branches: list[Branch]


class CarOffer(BaseModel):
    vehicle_id: VehicleId
    make: str
    model: str
    year: int
    vehicle_class: VehicleClass
    seats: int
    transmission: Transmission
    fuel: Fuel
    daily_rate: float
    days: int
    estimated_total: float = Field(json_schema_extra={MONEY: True}, description="Days x daily rate, before extras, discounts and fees.")


class CarSearchResult(Page):
    branch_id: BranchId
    pickup_at: str
    return_at: str
    cars: list[CarOffer]


class BookedWindow(BaseModel):
    pickup_at: str
    return_at: str
    status: RentalStatus


class VehicleDetails(BaseModel):
    vehicle: Vehicle
    branch_name: str
    city: str
    booked: list[BookedWindow] = Field(description="Upcoming and ongoing rentals of this car.")
    damage_reports: list[DamageReport]


class RentalQuote(BaseModel):
    vehicle_id: VehicleId
    pickup_branch_id: BranchId
    return_branch_id: BranchId
    pickup_at: str
    return_at: str
    days: int
    extras: list[Extra]
    daily_rate: float
    base_price: float = Field(json_schema_extra={MONEY: True})
    discount: float
    extras_price: float = Field(json_schema_extra={MONEY: True})
    one_way_fee: float = Field(json_schema_extra={MONEY: True})
    total_price: float = Field(json_schema_extra={MONEY: True})


class CustomerRentals(Page):
    customer: RentalCustomer
    rentals: list[Rental]
    open_ride_ids: entity_ids("ride", "The customer's rides not yet completed or cancelled.")


class RideOption(BaseModel):
    ride_type: RideType
    seats: int
    fare_estimate: float = Field(json_schema_extra={MONEY: True})


class RideFareEstimate(BaseModel):
    city: str
    pickup_address: str
    dropoff_address: str
    distance_km: float
    driver_eta_minutes: int
    options: list[RideOption]


# -- helpers -------------------------------------------------------------------------------
def _vehicle(state: CarRentalState, vehicle_id: str) -> Vehicle:
    return find(state.vehicles, vehicle_id, hint="use search_rental_cars to find one")


def _branch(state: CarRentalState, branch_id: str, param: str) -> Branch:
    return find(state.branches, branch_id)


def _customer(state: CarRentalState, customer_id: str) -> RentalCustomer:
    return find(state.customers, customer_id, hint="use list_customer_rentals with the customer's email")


def _rental(state: CarRentalState, rental_id: str) -> Rental:
    return find(state.rentals, rental_id, hint="use list_customer_rentals to find a customer's rentals")


def _status(rental: Rental, allowed: tuple[str, ...], action: str) -> None:
    require(rental.status in allowed, f"rental '{rental.rental_id}' is {rental.status}; "
            f"only {' or '.join(allowed)} rentals can {action}",
            reason='state', rejected=(rental.rental_id, rental.status, action),
            wanted=tuple(allowed))


def _open_at(branch: Branch, when: datetime, param: str) -> None:
    hhmm = when.strftime("%H:%M")
    require(branch.opens <= hhmm <= branch.closes, f"{branch.name} ({branch.branch_id}) is open "
            f"{branch.opens}-{branch.closes}; {param} at {hhmm} is outside its opening hours",
            params=(param,), rejected=(branch.name, branch.opens, branch.closes, hhmm))


def _days(start: datetime, end: datetime) -> int:
    return max(1, math.ceil((end - start).total_seconds() / 86400))


def _busy_until(state: CarRentalState, rental: Rental) -> datetime:
    end = datetime.fromisoformat(rental.return_at)
    return max(end, state.now_dt()) if rental.status == "active" else end


def _clash(state: CarRentalState, vehicle_id: str, start: datetime, end: datetime,
           exclude: str | None = None) -> Rental | None:
    return next((r for r in state.rentals.values()
                 if r.vehicle_id == vehicle_id and r.status in _BUSY and r.rental_id != exclude
                 and datetime.fromisoformat(r.pickup_at) < end and start < _busy_until(state, r)), None)


def _one_way(vehicle: Vehicle, pick: Branch, back: Branch, state: CarRentalState) -> float:
    if back.city == pick.city:
        return 0.0
    same = [b.branch_id for b in state.branches.values() if b.city == pick.city]
    require(vehicle.vehicle_class in ONE_WAY_CLASSES,
            f"{vehicle.vehicle_class} cars cannot be returned in another city ({back.city}); "
            f"return_branch_id must be in {pick.city}: {known(same)}; one-way rentals are allowed for "
            f"{', '.join(ONE_WAY_CLASSES)} cars",
            params=('city', 'return_branch_id'), rejected=(vehicle.vehicle_class, pick.city),
            choices=(*shown(same), *tuple(ONE_WAY_CLASSES),))
    return ONE_WAY_FEE


def _driver(customer: RentalCustomer, vehicle: Vehicle, end: datetime) -> None:
    require(customer.age >= MIN_AGE, f"customer '{customer.customer_id}' is {customer.age}; "
            f"drivers must be at least {MIN_AGE}",
            reason='limit', rejected=(customer.customer_id, customer.age, MIN_AGE))
    require(customer.age >= RESTRICTED_MIN_AGE or vehicle.vehicle_class not in RESTRICTED_CLASSES,
            f"customer '{customer.customer_id}' is {customer.age}; {vehicle.vehicle_class} cars need a driver "
            f"aged {RESTRICTED_MIN_AGE} or over; pick an economy, compact, midsize or suv car",
            reason='missing',
            rejected=(customer.customer_id, customer.age, vehicle.vehicle_class, RESTRICTED_MIN_AGE))
    require(customer.license_expiry >= end.date().isoformat(),
            f"the driving licence of '{customer.customer_id}' expires on {customer.license_expiry}, "
            f"before the return on {end.date()}",
            rejected=(customer.customer_id, customer.license_expiry))


def _plan(state: CarRentalState, vehicle: Vehicle, pickup_at: str, return_at: str, return_branch_id: str | None,
          extras: list[str], customer: RentalCustomer | None, rental: Rental | None = None) -> dict:
    """Check a rental window (new, or a change to `rental`) and price it; raises on any rule broken."""
    start, end = parse_moment(pickup_at, "pickup_at"), parse_moment(return_at, "return_at")
    if rental is None:
        require(start >= state.now_dt(), f"pickup_at {pickup_at} is in the past; now is {state.now}",
                reason='past', params=('pickup_at',), rejected=(pickup_at, state.now))
    require(end > start, f"return_at ({return_at}) must be after pickup_at ({pickup_at})",
            params=('pickup_at', 'return_at'))
    days = _days(start, end)
    require(days <= MAX_RENTAL_DAYS, f"a rental may last at most {MAX_RENTAL_DAYS} days; "
            f"{pickup_at} to {return_at} is {days} days",
            reason='limit', rejected=(MAX_RENTAL_DAYS, pickup_at, return_at, days))
    pick = state.branches[rental.pickup_branch_id if rental else vehicle.branch_id]
    back = _branch(state, return_branch_id or pick.branch_id, "return_branch_id")
    if rental is None:
        require(vehicle.status != "maintenance",
                f"vehicle '{vehicle.vehicle_id}' is in maintenance; use search_rental_cars for another car",
                rejected=(vehicle.vehicle_id,))
        _open_at(pick, start, "pickup_at")
    _open_at(back, end, "return_at")
    one_way = _one_way(vehicle, pick, back, state)
    clash = _clash(state, vehicle.vehicle_id, start, end, rental.rental_id if rental else None)
    require(clash is None, f"vehicle '{vehicle.vehicle_id}' is already booked from "
            f"{clash.pickup_at if clash else ''} to {iso(_busy_until(state, clash)) if clash else ''}"
            + (f"; the latest possible return is {clash.pickup_at if clash else ''}" if rental else
               "; choose other times or another car"),
            reason='conflict', rejected=(vehicle.vehicle_id,))
    if customer is not None:
        _driver(customer, vehicle, end)
    rate = rental.daily_rate if rental else vehicle.daily_rate
    money = rental_price(days, rate, customer.loyalty_tier if customer else "none", extras, one_way)
    return {"days": days, "return_branch_id": back.branch_id, "pickup_branch_id": pick.branch_id, **money}


def _reprice(state: CarRentalState, rental: Rental) -> None:
    tier = state.customers[rental.customer_id].loyalty_tier
    money = rental_price(rental.days, rental.daily_rate, tier, rental.extras, rental.one_way_fee)
    for key, value in money.items():
        setattr(rental, key, value)
    rental.total_price = round(rental.total_price + rental.late_fee + rental.damage_charges, 2)


def _ride_city(state: CarRentalState, city: str) -> str:
    cities = sorted({b.city for b in state.branches.values()})
    match = next((c for c in cities if c.lower() == city.strip().lower()), None)
    require(match is not None, f"no ride service in '{city}' (parameter 'city'); cities served: {', '.join(cities)}",
            params=('city',), rejected=(city,), choices=tuple(cities))
    assert match is not None
    return match


def _route(state: CarRentalState, city: str, pickup: str, dropoff: str) -> tuple[str, float, int]:
    name = _ride_city(state, city)
    require(norm_address(pickup) != norm_address(dropoff),
            f"pickup_address and dropoff_address are the same place ('{pickup.strip()}')",
            params=('dropoff_address', 'pickup_address'), rejected=(pickup.strip(),))
    km, eta = ride_route(name, pickup, dropoff)
    return name, km, eta


# -- branches and cars ---------------------------------------------------------------------
@tool()
def list_rental_branches(
    state: CarRentalState,
    city: text("word", "Only branches in this city.", listed="city", optional=True) = None,
    airport_only: Annotated[bool, Field(description="Only branches at an airport.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> BranchList:
    """List car rental branches with address, airport flag and opening hours, by city."""
    found = [b for b in state.branches.values()
             if (city is None or b.city.lower() == city.strip().lower()) and (b.airport or not airport_only)]
    if city is not None and not found:
        _ride_city(state, city)
    return BranchList.of(found, offset, limit)


@tool(sensitive=("branch_id",))
def search_rental_cars(
    state: CarRentalState,
    branch_id: entity_id("branch", "Pickup branch id, e.g. 'BRN-0002' (from list_rental_branches).", example="BRN-0002"),
    pickup_at: PickupAt,
    return_at: ReturnAt,
    vehicle_class: Annotated[VehicleClass | None, Field(description="Only cars of this class.")] = None,
    transmission: Annotated[Transmission | None, Field(description="Only cars with this gearbox.")] = None,
    fuel: Annotated[Fuel | None, Field(description="Only cars with this fuel type.")] = None,
    min_seats: Annotated[int | None, Field(ge=1, le=9, description="Only cars with at least this many seats.")] = None,
    max_daily_rate: Annotated[float | None, Field(json_schema_extra=measure("money"), gt=0, le=5000,
                                                  description="Only cars at or under this daily rate, USD.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CarSearchResult:
    """Find cars free at a branch for a pickup-to-return window, cheapest first, with filters."""
    branch = _branch(state, branch_id, "branch_id")
    start, end = parse_moment(pickup_at, "pickup_at"), parse_moment(return_at, "return_at")
    pickup_at, return_at = iso(start), iso(end)  # echoed to the minute
    require(start >= state.now_dt(), f"pickup_at {pickup_at} is in the past; now is {state.now}",
            reason='past', params=('pickup_at',), rejected=(pickup_at, state.now))
    require(end > start, f"return_at ({return_at}) must be after pickup_at ({pickup_at})",
            params=('pickup_at', 'return_at'))
    days = _days(start, end)
    require(days <= MAX_RENTAL_DAYS, f"a rental may last at most {MAX_RENTAL_DAYS} days",
            reason='limit', rejected=(MAX_RENTAL_DAYS,))
    _open_at(branch, start, "pickup_at")
    cars = sorted(
        (v for v in state.vehicles.values()
         if v.branch_id == branch_id and v.status != "maintenance"
         and (vehicle_class is None or v.vehicle_class == vehicle_class)
         and (transmission is None or v.transmission == transmission) and (fuel is None or v.fuel == fuel)
         and (min_seats is None or v.seats >= min_seats)
         and (max_daily_rate is None or v.daily_rate <= max_daily_rate)
         and _clash(state, v.vehicle_id, start, end) is None),
        key=lambda v: (v.daily_rate, v.vehicle_id),
    )
    offers = [CarOffer(vehicle_id=v.vehicle_id, make=v.make, model=v.model, year=v.year,
                       vehicle_class=v.vehicle_class, seats=v.seats, transmission=v.transmission, fuel=v.fuel,
                       daily_rate=v.daily_rate, days=days, estimated_total=round(v.daily_rate * days, 2))
              for v in cars]
    return CarSearchResult.of(offers, offset, limit, branch_id=branch_id, pickup_at=pickup_at,
                              return_at=return_at)


@tool(sensitive=("vehicle_id",))
def get_rental_car(state: CarRentalState, vehicle_id: VehicleId) -> VehicleDetails:
    """Get a car's details, status, branch, the times it is already booked and its damage reports."""
    car = _vehicle(state, vehicle_id)
    branch = state.branches[car.branch_id]
    booked = sorted((BookedWindow(pickup_at=r.pickup_at, return_at=r.return_at, status=r.status)
                     for r in state.rentals.values() if r.vehicle_id == vehicle_id and r.status in _BUSY),
                    key=lambda w: w.pickup_at)
    reports = [d for d in state.damage_reports.values() if d.vehicle_id == vehicle_id]
    return VehicleDetails(vehicle=car, branch_name=branch.name, city=branch.city, booked=booked,
                          damage_reports=reports)


@tool(sensitive=("vehicle_id", "customer_id", "return_branch_id"))
def get_rental_quote(
    state: CarRentalState,
    vehicle_id: VehicleId,
    pickup_at: PickupAt,
    return_at: ReturnAt,
    return_branch_id: ReturnBranch = None,
    extras: Extras = None,
    customer_id: Annotated[CustomerId | None, Field(description="Customer to quote for (applies their loyalty discount and checks they may drive it).")] = None,
) -> RentalQuote:
    """Price a rental of one car (days, extras, one-way fee, loyalty discount) without booking it."""
    car = _vehicle(state, vehicle_id)
    customer = _customer(state, customer_id) if customer_id is not None else None
    wanted = sorted(set(extras or ()))
    pickup_at = iso(parse_moment(pickup_at, "pickup_at"))  # stored to the minute
    return_at = iso(parse_moment(return_at, "return_at"))
    plan = _plan(state, car, pickup_at, return_at, return_branch_id, wanted, customer)
    return RentalQuote(vehicle_id=vehicle_id, pickup_at=pickup_at, return_at=return_at, extras=wanted, **plan)


@tool(write=True, sensitive=("customer_id", "vehicle_id", "return_branch_id"))
def reserve_rental_car(
    state: CarRentalState,
    customer_id: CustomerId,
    vehicle_id: VehicleId,
    pickup_at: PickupAt,
    return_at: ReturnAt,
    return_branch_id: ReturnBranch = None,
    extras: Extras = None,
) -> Rental:
    """Reserve a car for a customer from its branch for a time window; checks age, licence and clashes."""
    customer = _customer(state, customer_id)
    car = _vehicle(state, vehicle_id)
    wanted = sorted(set(extras or ()))
    pickup_at = iso(parse_moment(pickup_at, "pickup_at"))  # stored to the minute
    return_at = iso(parse_moment(return_at, "return_at"))
    plan = _plan(state, car, pickup_at, return_at, return_branch_id, wanted, customer)
    rental = Rental(rental_id=state.new_id("RNT"), customer_id=customer_id, vehicle_id=vehicle_id,
                    pickup_at=pickup_at, return_at=return_at, extras=wanted, status="reserved",
                    created_at=state.now, **plan)
    state.rentals[rental.rental_id] = rental
    return rental


@tool(sensitive=("rental_id",))
def get_car_rental(state: CarRentalState, rental_id: RentalId) -> Rental:
    """Get a rental: car, branches, times, extras, status, price breakdown and mileage."""
    return _rental(state, rental_id)


@tool(sensitive=("customer_id", "email"))
def list_customer_rentals(
    state: CarRentalState,
    customer_id: Annotated[CustomerId | None, Field(description="Rental customer id, e.g. 'RCU-0004'.", json_schema_extra={EXAMPLE: "RCU-0004"})] = None,
    email: Annotated[CustomerEmail | None, Field(description="The customer's email, if the id is not known.")] = None,
    status: Annotated[RentalStatus | None, Field(description="Only rentals in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CustomerRentals:
    """Show a customer's profile (licence, age, tier) and rentals, latest pickup first, by id or email."""
    require((customer_id is None) != (email is None), "give exactly one of customer_id or email",
            reason='missing', params=('customer_id', 'email'))
    if customer_id is not None:
        customer = _customer(state, customer_id)
    else:
        assert email is not None
        found = next((c for c in state.customers.values() if c.email.lower() == email.strip().lower()), None)
        require(found is not None, f"no customer with email '{email}' (parameter 'email'); check the spelling",
                reason='not_found', params=('email',), rejected=(email,))
        assert found is not None
        customer = found
    rentals = sorted((r for r in state.rentals.values()
                      if r.customer_id == customer.customer_id and (status is None or r.status == status)),
                     key=lambda r: (r.pickup_at, r.rental_id), reverse=True)
    rides = [r.ride_id for r in state.rides.values() if r.customer_id == customer.customer_id and r.status in _OPEN_RIDE]
    return CustomerRentals.of(rentals, offset, limit, customer=customer, open_ride_ids=rides)


# -- rental lifecycle ----------------------------------------------------------------------
@tool(write=True, sensitive=("rental_id",))
def cancel_car_rental(state: CarRentalState, rental_id: RentalId) -> Rental:
    """Cancel a reserved rental; within 24 hours of pickup it costs one day's rate."""
    rental = _rental(state, rental_id)
    require(rental.status != "active", f"rental '{rental_id}' is active (the car was picked up); "
            "an active rental cannot be cancelled, end it with return_rental_car",
            rejected=(rental_id,))
    _status(rental, ("reserved",), "be cancelled")
    hours = (datetime.fromisoformat(rental.pickup_at) - state.now_dt()).total_seconds() / 3600
    fee = rental.daily_rate if hours < FREE_CANCEL_HOURS else 0.0
    rental.status, rental.cancellation_fee, rental.total_price = "cancelled", fee, fee
    return rental


@tool(write=True, sensitive=("rental_id",))
def add_rental_extra(
    state: CarRentalState,
    rental_id: RentalId,
    extra: Annotated[Extra, Field(description="The extra to add for the whole rental.")],
) -> Rental:
    """Add an extra (GPS, child seat, extra driver, full insurance) to a reserved or active rental."""
    rental = _rental(state, rental_id)
    _status(rental, _BUSY, "take extras")
    require(extra not in rental.extras, f"rental '{rental_id}' already has {extra}",
            reason='conflict', rejected=(rental_id, extra))
    rental.extras = sorted([*rental.extras, extra])
    _reprice(state, rental)
    return rental


@tool(write=True, sensitive=("rental_id",))
def extend_car_rental(
    state: CarRentalState,
    rental_id: RentalId,
    new_return_at: moment("New return time, later than the current one.", listed="return_at", role="return"),
) -> Rental:
    """Move a reserved or active rental's return to a later time, if the car is free until then."""
    rental = _rental(state, rental_id)
    _status(rental, _BUSY, "be extended")
    new_end = parse_moment(new_return_at, "new_return_at")
    new_return_at = iso(new_end)  # stored to the minute
    require(new_end > datetime.fromisoformat(rental.return_at),
            f"new_return_at ({new_return_at}) must be later than the current return time ({rental.return_at})",
            params=('new_return_at',))
    require(new_end > state.now_dt(), f"new_return_at ({new_return_at}) is in the past; now is {state.now}",
            reason='past', params=('new_return_at',), rejected=(state.now,))
    car, customer = state.vehicles[rental.vehicle_id], state.customers[rental.customer_id]
    plan = _plan(state, car, rental.pickup_at, new_return_at, rental.return_branch_id, rental.extras,
                 customer, rental=rental)
    rental.return_at, rental.days = new_return_at, plan["days"]
    _reprice(state, rental)
    return rental


@tool(write=True, sensitive=("rental_id",))
def start_car_rental(state: CarRentalState, rental_id: RentalId) -> Rental:
    """Hand the car over at pickup: from an hour before the reserved pickup time until a day after."""
    rental = _rental(state, rental_id)
    _status(rental, ("reserved",), "be picked up")
    pickup, now = datetime.fromisoformat(rental.pickup_at), state.now_dt()
    require(now >= pickup - timedelta(minutes=PICKUP_EARLY_MINUTES),
            f"rental '{rental_id}' can be picked up from {iso(pickup - timedelta(minutes=PICKUP_EARLY_MINUTES))} "
            f"(reserved pickup {rental.pickup_at}); now is {state.now}",
            rejected=(rental_id, rental.pickup_at, state.now))
    require(now <= pickup + timedelta(hours=NO_SHOW_HOURS),
            f"rental '{rental_id}' expired: the pickup was {rental.pickup_at}; cancel it and reserve again",
            rejected=(rental_id, rental.pickup_at))
    car = state.vehicles[rental.vehicle_id]
    require(car.status != "maintenance", f"vehicle '{car.vehicle_id}' is in maintenance and cannot be "
            "handed over; cancel this rental and reserve another car", rejected=(car.vehicle_id,))
    require(car.status != "rented", f"vehicle '{car.vehicle_id}' is still out on an earlier rental",
            rejected=(car.vehicle_id,))
    rental.status, rental.picked_up_at, rental.start_mileage = "active", state.now, car.mileage
    car.status = "rented"
    return rental


@tool(write=True, sensitive=("rental_id", "odometer_km", "return_branch_id"))
def return_rental_car(
    state: CarRentalState,
    rental_id: RentalId,
    odometer_km: Annotated[int, Field(json_schema_extra=measure("reading"), ge=0, le=2_000_000, description="Odometer reading at return, km.")],
    return_branch_id: Annotated[BranchId | None, Field(description="Branch where the car is returned; default: the reserved return branch.")] = None,
) -> Rental:
    """Return an active rental's car: records mileage, charges a late fee per day late, frees the car."""
    rental = _rental(state, rental_id)
    _status(rental, ("active",), "be returned")
    car = state.vehicles[rental.vehicle_id]
    back = _branch(state, return_branch_id or rental.return_branch_id, "return_branch_id")
    _open_at(back, state.now_dt(), "the return now")
    one_way = _one_way(car, state.branches[rental.pickup_branch_id], back, state)
    start_km = rental.start_mileage or 0
    require(odometer_km >= start_km, f"odometer_km {odometer_km} is below the reading at pickup ({start_km})",
            params=('odometer_km',), rejected=(odometer_km,))
    require(odometer_km - start_km <= 1500 * rental.days,
            f"odometer_km {odometer_km} means {odometer_km - start_km} km in {rental.days} days; check the reading",
            params=('odometer_km',), rejected=(odometer_km, rental.days))
    late = (state.now_dt() - datetime.fromisoformat(rental.return_at)).total_seconds() / 60
    late_days = math.ceil(late / 1440) if late > LATE_GRACE_MINUTES else 0
    rental.late_fee = round(late_days * rental.daily_rate, 2)
    rental.one_way_fee, rental.return_branch_id = one_way, back.branch_id
    _reprice(state, rental)
    rental.status, rental.returned_at = "returned", state.now
    rental.end_mileage, rental.mileage_driven = odometer_km, odometer_km - start_km
    major = any(d.rental_id == rental_id and d.severity == "major" for d in state.damage_reports.values())
    car.status, car.mileage, car.branch_id = ("maintenance" if major else "available"), odometer_km, back.branch_id
    return rental


@tool(write=True, sensitive=("rental_id",))
def report_vehicle_damage(
    state: CarRentalState,
    rental_id: RentalId,
    area: Annotated[DamageArea, Field(description="Where the car is damaged.")],
    severity: Annotated[DamageSeverity, Field(description="minor (cosmetic) or major (car must go to maintenance).")],
    description: text("body", "What happened and what it looks like.", listed="description", min_length=3, max_length=500),
) -> DamageReport:
    """Report damage to the car of an active or returned rental; charged unless it has full insurance."""
    rental = _rental(state, rental_id)
    _status(rental, ("active", "returned"), "get damage reports")
    dup = next((d for d in state.damage_reports.values() if d.rental_id == rental_id and d.area == area), None)
    require(dup is None, f"damage to the {area} was already reported for rental '{rental_id}' "
            f"({dup.report_id if dup else ''})", reason='conflict', rejected=(area, rental_id))
    charge = 0.0 if "insurance_full" in rental.extras else DAMAGE_CHARGE[severity]
    report = DamageReport(report_id=state.new_id("DMG"), rental_id=rental_id, vehicle_id=rental.vehicle_id,
                          area=area, severity=severity, description=description.strip(), charge=charge,
                          reported_at=state.now)
    state.damage_reports[report.report_id] = report
    rental.damage_charges = round(rental.damage_charges + charge, 2)
    rental.total_price = round(rental.total_price + charge, 2)
    car = state.vehicles[rental.vehicle_id]
    if severity == "major" and rental.status == "returned" and car.status == "available":
        car.status = "maintenance"
    return report


# -- rides ---------------------------------------------------------------------------------
@tool()
def estimate_ride_fare(
    state: CarRentalState,
    city: City,
    pickup_address: Address,
    dropoff_address: Address,
    ride_type: Annotated[RideType | None, Field(description="Only this ride type; default: all of them.")] = None,
) -> RideFareEstimate:
    """Estimate the distance, driver arrival time and fare of a ride for each ride type."""
    name, km, eta = _route(state, city, pickup_address, dropoff_address)
    types: list[RideType] = [ride_type] if ride_type else ["standard", "xl", "premium"]
    return RideFareEstimate(
        city=name, pickup_address=pickup_address.strip(), dropoff_address=dropoff_address.strip(),
        distance_km=km, driver_eta_minutes=eta,
        options=[RideOption(ride_type=t, seats=RIDE_SEATS[t], fare_estimate=ride_fare(t, km)) for t in types],
    )


@tool(write=True, sensitive=("customer_id",))
def request_ride(
    state: CarRentalState,
    customer_id: CustomerId,
    city: City,
    pickup_address: Address,
    dropoff_address: Address,
    ride_type: Annotated[RideType, Field(description="standard (4 seats), xl (6 seats) or premium (4 seats).")] = "standard",
    passengers: Annotated[int, Field(ge=1, le=6, description="Number of riders.")] = 1,
) -> Ride:
    """Request a ride with a driver for a customer; one open ride per customer at a time."""
    customer = _customer(state, customer_id)
    name, km, eta = _route(state, city, pickup_address, dropoff_address)
    require(passengers <= RIDE_SEATS[ride_type], f"a {ride_type} ride seats {RIDE_SEATS[ride_type]}; "
            f"{passengers} passengers need an xl ride",
            reason='missing', params=('passengers',), rejected=(ride_type, passengers))
    open_ride = next((r for r in state.rides.values()
                      if r.customer_id == customer_id and r.status in _OPEN_RIDE), None)
    require(open_ride is None, f"customer '{customer_id}' already has an open ride "
            f"({open_ride.ride_id if open_ride else ''}, {open_ride.status if open_ride else ''}); "
            "cancel it with cancel_ride or wait until it completes",
            reason='conflict', rejected=(customer_id,))
    ride_id = state.new_id("RID")
    assigned = eta <= 10
    ride = Ride(ride_id=ride_id, customer_id=customer.customer_id, city=name, pickup_address=pickup_address.strip(),
                dropoff_address=dropoff_address.strip(), ride_type=ride_type, passengers=passengers,
                distance_km=km, fare_estimate=ride_fare(ride_type, km),
                status="driver_assigned" if assigned else "requested",
                driver_name=driver_for(ride_id) if assigned else None, eta_minutes=eta if assigned else None,
                requested_at=state.now)
    state.rides[ride_id] = ride
    return ride


@tool(write=True, sensitive=("ride_id",))
def cancel_ride(state: CarRentalState, ride_id: RideId) -> Ride:
    """Cancel a ride before it starts; free while no driver is assigned, a small fee after."""
    ride = find(state.rides, ride_id, hint="list_customer_rentals shows a customer's open rides")
    require(ride.status != "completed", f"ride '{ride_id}' is already completed and cannot be cancelled",
            reason='conflict', rejected=(ride_id,))
    require(ride.status != "cancelled", f"ride '{ride_id}' is already cancelled",
            reason='conflict', rejected=(ride_id,))
    require(ride.status != "in_progress", f"ride '{ride_id}' is in progress; it cannot be cancelled now",
            rejected=(ride_id,))
    ride.cancellation_fee = RIDE_CANCEL_FEE if ride.status == "driver_assigned" else 0.0
    ride.status, ride.eta_minutes = "cancelled", None
    return ride


@tool(sensitive=("ride_id",))
def get_ride_status(state: CarRentalState, ride_id: RideId) -> Ride:
    """Get a ride's status, driver, arrival estimate, distance and fare."""
    return find(state.rides, ride_id, hint="list_customer_rentals shows a customer's open rides")
