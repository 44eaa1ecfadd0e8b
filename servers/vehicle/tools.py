"""Connected-vehicle tools: status, locks, climate, charging, trips, alerts, service, valet, sharing."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    MONEY,
    Limit,
    Offset,
    Page,
    day,
    entity_id,
    measure,
    moment,
    naming,
    parse_day,
    parse_moment,
    text,
)
from prove_servers.vehicle.state import (
    BOOKING_HORIZON_DAYS,
    COST_PER_KWH,
    LOW_TIRE_MARGIN,
    MAX_CABIN_C,
    MAX_CHARGE_LIMIT,
    MIN_CABIN_C,
    MIN_CHARGE_LIMIT,
    MIN_CLIMATE_PCT,
    MODELS,
    PERMISSION_RANK,
    AccessGrant,
    Alert,
    CenterId,
    ChargerType,
    ChargingSession,
    Connectivity,
    Permission,
    ServiceAppointment,
    ServiceType,
    SessionId,
    Severity,
    SharePermission,
    TirePosition,
    Trip,
    UpdateStatus,
    UserId,
    Vehicle,
    VehicleId,
    VehicleState,
)

ActingUserId = entity_id("user", "Your app user id (whose permission is checked), e.g. 'USR-0002'.", example="USR-0002")


class VehicleSummary(BaseModel):
    vehicle_id: VehicleId
    nickname: str = Field(json_schema_extra=naming("name"))
    model: str
    vin: str
    ev: bool
    your_permission: Permission
    connectivity: Connectivity
    battery_pct: int | None
    fuel_pct: int | None
    range_km: int
    city: str
    locked: bool


class VehicleList(Page):
    user_id: UserId
    vehicles: list[VehicleSummary]


class AccessEntry(BaseModel):
    user_id: UserId
    name: str = Field(json_schema_extra=naming("name"))
    permission: Permission
    granted_at: str


class VehicleStatus(BaseModel):
    vehicle_id: VehicleId
    nickname: str = Field(json_schema_extra=naming("name"))
    model: str
    model_year: int
    vin: str
    ev: bool
    your_permission: Permission
    connectivity: Connectivity
    last_seen: str = Field(description="When the data below was reported (asleep/offline: last known).")
    odometer_km: int
    battery_pct: int | None
    fuel_pct: int | None
    range_km: int
    charge_limit_pct: int | None
    plugged_in: bool
    charger_type: ChargerType | None
    charging: bool
    active_charging_session_id: SessionId | None
    city: str
    lat: float
    lon: float
    locked: bool
    climate_on: bool
    cabin_target_c: float
    inside_temp_c: float
    low_tires: list[TirePosition]
    software_version: str
    update_status: UpdateStatus
    update_version: str | None
    update_finishes_at: str | None
    valet_mode: bool
    open_alerts: int
    upcoming_appointment: ServiceAppointment | None
    access: list[AccessEntry]


class TireReading(BaseModel):
    position: TirePosition
    bar: float
    low: bool


class TireReport(BaseModel):
    vehicle_id: VehicleId
    recommended_bar: float
    low_below_bar: float
    measured_at: str
    tires: list[TireReading]
    any_low: bool


class TripList(Page):
    vehicle_id: VehicleId
    trips: list[Trip]
    total_distance_km: float = Field(description="Over all matching trips, not just this page.")


class SessionList(Page):
    vehicle_id: VehicleId
    sessions: list[ChargingSession]
    total_energy_kwh: float
    total_cost_eur: float = Field(json_schema_extra={MONEY: True})


class AlertList(Page):
    vehicle_id: VehicleId
    alerts: list[Alert]


class ServiceSlot(BaseModel):
    center_id: CenterId
    center_name: str
    address: str
    start: str
    services: list[ServiceType]


class SlotList(Page):
    city: str
    slots: list[ServiceSlot]


class ChargeSettings(BaseModel):
    vehicle_id: VehicleId
    charge_limit_pct: int
    battery_pct: int
    charging: bool
    stopped_session_id: SessionId | None = Field(description="Session ended because the new limit is reached.")


class AccessList(BaseModel):
    vehicle_id: VehicleId
    access: list[AccessEntry]


def _vehicle(state: VehicleState, vehicle_id: str) -> Vehicle:
    return find(state.vehicles, vehicle_id, hint="use list_my_vehicles to find yours")


def _grant(vehicle: Vehicle, user_id: str) -> AccessGrant | None:
    return next((g for g in vehicle.access if g.user_id == user_id), None)


def _allowed(state: VehicleState, vehicle_id: str, user_id: str, need: Permission, action: str) -> Vehicle:
    """The vehicle, if `user_id` has at least `need` access to it (owner > driver > guest)."""
    find(state.users, user_id)
    veh = _vehicle(state, vehicle_id)
    grant = _grant(veh, user_id)
    mine = [v.vehicle_id for v in state.vehicles.values() if _grant(v, user_id)]
    require(grant is not None, f"user '{user_id}' has no access to vehicle '{vehicle_id}'; "
            f"their vehicles: {known(mine)}", rejected=(user_id, vehicle_id), choices=shown(mine))
    assert grant is not None
    require(PERMISSION_RANK[grant.permission] >= PERMISSION_RANK[need],
            f"user '{user_id}' has {grant.permission} access to '{vehicle_id}'; {action} needs "
            f"{'owner' if need == 'owner' else 'driver or owner'} access",
            reason='missing', rejected=(user_id, grant.permission, vehicle_id, action))
    return veh


def _online(veh: Vehicle) -> None:
    require(veh.connectivity != "asleep",
            f"vehicle '{veh.vehicle_id}' is asleep (last seen {veh.last_seen}); wake it with wake_vehicle first",
            rejected=(veh.vehicle_id, veh.last_seen))
    require(veh.connectivity != "offline",
            f"vehicle '{veh.vehicle_id}' is offline since {veh.last_seen} (no connection); remote commands "
            "cannot reach it until it is back in coverage",
            params=('since',), rejected=(veh.vehicle_id, veh.last_seen))


def _not_installing(veh: Vehicle, action: str) -> None:
    require(veh.update_status != "installing",
            f"software update {veh.update_version} is installing on '{veh.vehicle_id}' until "
            f"{veh.update_finishes_at}; {action} is unavailable until it finishes",
            rejected=(veh.update_version, veh.vehicle_id, veh.update_finishes_at, action))


def _ev(veh: Vehicle, action: str) -> None:
    require(veh.ev, f"vehicle '{veh.vehicle_id}' ({veh.model}) is not electric; {action} applies to electric vehicles only",
            rejected=(veh.vehicle_id, action))


def _low_tires(veh: Vehicle) -> list[TirePosition]:
    cut = veh.recommended_tire_bar - LOW_TIRE_MARGIN
    return [p for p in ("front_left", "front_right", "rear_left", "rear_right") if getattr(veh.tires, p) < cut]


def _entries(state: VehicleState, veh: Vehicle) -> list[AccessEntry]:
    return [AccessEntry(user_id=g.user_id, name=state.users[g.user_id].name, permission=g.permission,
                        granted_at=g.granted_at) for g in veh.access]


def _upcoming(state: VehicleState, vehicle_id: str) -> ServiceAppointment | None:
    return next((a for a in sorted(state.appointments.values(), key=lambda a: a.start)
                 if a.vehicle_id == vehicle_id and a.status == "booked" and a.start > state.now), None)


def _active_session(state: VehicleState, vehicle_id: str) -> ChargingSession | None:
    return next((s for s in state.charging_sessions.values()
                 if s.vehicle_id == vehicle_id and s.status == "active"), None)


def _status(state: VehicleState, veh: Vehicle, user_id: str) -> VehicleStatus:
    grant = _grant(veh, user_id)
    assert grant is not None
    session = _active_session(state, veh.vehicle_id)
    fields = veh.model_dump(include={
        "vehicle_id", "nickname", "model", "model_year", "vin", "ev", "connectivity", "last_seen", "odometer_km",
        "battery_pct", "fuel_pct", "range_km", "charge_limit_pct", "plugged_in", "charger_type", "charging",
        "city", "lat", "lon", "locked", "climate_on", "cabin_target_c", "inside_temp_c", "software_version",
        "update_status", "update_version", "update_finishes_at", "valet_mode"})
    return VehicleStatus(
        **fields, your_permission=grant.permission, low_tires=_low_tires(veh),
        active_charging_session_id=session.session_id if session else None,
        open_alerts=sum(a.vehicle_id == veh.vehicle_id and not a.resolved for a in state.alerts.values()),
        upcoming_appointment=_upcoming(state, veh.vehicle_id), access=_entries(state, veh),
    )


def _finish_session(state: VehicleState, veh: Vehicle, session: ChargingSession) -> ChargingSession:
    """Stop charging and close `session` at the current battery level."""
    capacity = MODELS[veh.model][1] if veh.model in MODELS else 75
    veh.charging = False
    session.status, session.ended_at, session.end_pct = "completed", state.now, veh.battery_pct
    session.energy_kwh = round(max(0, (veh.battery_pct or 0) - session.start_pct) * capacity / 100, 1)
    session.cost_eur = round(session.energy_kwh * COST_PER_KWH[session.charger_type], 2)
    return session


@tool(sensitive=("user_id",))
def list_my_vehicles(
    state: VehicleState,
    user_id: ActingUserId,
    permission: Annotated[Permission | None, Field(description="Only vehicles where you hold this permission.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> VehicleList:
    """List the vehicles an app user can access (owned or shared with them) with a short status each, a page at a time."""
    find(state.users, user_id)
    found = []
    for veh in state.vehicles.values():
        grant = _grant(veh, user_id)
        if grant is not None and (permission is None or grant.permission == permission):
            found.append(VehicleSummary(
                vehicle_id=veh.vehicle_id, nickname=veh.nickname, model=veh.model, vin=veh.vin, ev=veh.ev,
                your_permission=grant.permission, connectivity=veh.connectivity, battery_pct=veh.battery_pct,
                fuel_pct=veh.fuel_pct, range_km=veh.range_km, city=veh.city, locked=veh.locked))
    return VehicleList.of(found, offset, limit, user_id=user_id)


@tool(sensitive=("vehicle_id", "user_id"))
def get_vehicle_status(state: VehicleState, vehicle_id: VehicleId, user_id: ActingUserId) -> VehicleStatus:
    """Get a vehicle's full status: charge or fuel, range, location, locks, climate, software, access list.

    Asleep or offline vehicles report their last known data (see last_seen).
    """
    return _status(state, _allowed(state, vehicle_id, user_id, "guest", "viewing status"), user_id)


@tool(sensitive=("vehicle_id", "user_id"))
def get_tire_pressures(state: VehicleState, vehicle_id: VehicleId, user_id: ActingUserId) -> TireReport:
    """Get the four tire pressures against the recommended pressure, flagging low tires."""
    veh = _allowed(state, vehicle_id, user_id, "guest", "reading tire pressures")
    low = _low_tires(veh)
    return TireReport(
        vehicle_id=vehicle_id, recommended_bar=veh.recommended_tire_bar,
        low_below_bar=round(veh.recommended_tire_bar - LOW_TIRE_MARGIN, 2), measured_at=veh.tires_measured_at,
        tires=[TireReading(position=p, bar=getattr(veh.tires, p), low=p in low)
               for p in ("front_left", "front_right", "rear_left", "rear_right")],
        any_low=bool(low),
    )


@tool(sensitive=("vehicle_id", "user_id", "driver_id"))
def list_vehicle_trips(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    since: Annotated[day("Only trips started on or after this date.") | None,
                     Field(description="Only trips started on or after this date.")] = None,
    driver_id: Annotated[UserId | None, Field(description="Only trips driven by this user id.")] = None,
    min_distance_km: Annotated[float | None, Field(ge=0, le=5000, description="Only trips at least this long.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> TripList:
    """List a vehicle's trips, newest first, with distance and energy or fuel used (drivers and owners only)."""
    _allowed(state, vehicle_id, user_id, "driver", "viewing trip history")
    since_day = parse_day(since, "since").isoformat() if since is not None else ""
    found = [t for t in reversed(state.trips.values()) if t.vehicle_id == vehicle_id and t.started_at[:10] >= since_day
             and (driver_id is None or t.driver_id == driver_id)
             and (min_distance_km is None or t.distance_km >= min_distance_km)]
    return TripList.of(found, offset, limit, vehicle_id=vehicle_id,
                       total_distance_km=round(sum(t.distance_km for t in found), 1))


@tool(sensitive=("vehicle_id", "user_id"))
def list_vehicle_charging_sessions(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    since: Annotated[day("Only sessions started on or after this date.") | None,
                     Field(description="Only sessions started on or after this date.")] = None,
    charger_type: Annotated[ChargerType | None, Field(description="Only sessions on this kind of charger.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> SessionList:
    """List an electric vehicle's charging sessions, newest first, with energy and cost totals."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "viewing charging history")
    _ev(veh, "charging history")
    since_day = parse_day(since, "since").isoformat() if since is not None else ""
    found = [s for s in sorted(state.charging_sessions.values(), key=lambda s: s.started_at, reverse=True)
             if s.vehicle_id == vehicle_id and s.started_at[:10] >= since_day
             and (charger_type is None or s.charger_type == charger_type)]
    return SessionList.of(found, offset, limit, vehicle_id=vehicle_id,
                          total_energy_kwh=round(sum(s.energy_kwh for s in found), 1),
                          total_cost_eur=round(sum(s.cost_eur for s in found), 2))


@tool(sensitive=("vehicle_id", "user_id"))
def list_vehicle_alerts(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    severity: Annotated[Severity | None, Field(description="Only alerts of this severity.")] = None,
    include_resolved: Annotated[bool, Field(description="Also list alerts already resolved.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> AlertList:
    """List a vehicle's alerts (low tire pressure, service due, updates, unlocked doors), newest first, a page at a time."""
    _allowed(state, vehicle_id, user_id, "guest", "viewing alerts")
    found = [a for a in sorted(state.alerts.values(), key=lambda a: a.created_at, reverse=True)
             if a.vehicle_id == vehicle_id and (include_resolved or not a.resolved)
             and (severity is None or a.severity == severity)]
    return AlertList.of(found, offset, limit, vehicle_id=vehicle_id)


def _free_slots(state: VehicleState, center_ids: list[str], first: date, days: int) -> list[ServiceSlot]:
    taken = {(a.center_id, a.start) for a in state.appointments.values() if a.status == "booked"}
    slots = []
    for i in range(days):
        day = first + timedelta(days=i)
        if day.weekday() >= 5:
            continue
        for cid in center_ids:
            center = state.service_centers[cid]
            for hhmm in center.slot_times:
                start = f"{day.isoformat()}T{hhmm}"
                if start > state.now and (cid, start) not in taken:
                    slots.append(ServiceSlot(center_id=cid, center_name=center.name, address=center.address,
                                             start=start, services=center.services))
    return slots


@tool()
def find_vehicle_service_slots(
    state: VehicleState,
    city: text("word", "City of the service center, e.g. 'Berlin'.", listed="city", example="Berlin", min_length=1, max_length=60),
    start_date: day("First day to search."),
    days: Annotated[int, Field(ge=1, le=14, description="How many days to search from start_date (1-14).")] = 5,
    service_type: Annotated[ServiceType | None, Field(description="Only centers offering this service.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> SlotList:
    """Find free service appointment slots at the manufacturer's service centers in a city (weekdays)."""
    cities = sorted({c.city for c in state.service_centers.values()})
    match = next((c for c in cities if c.lower() == city.strip().lower()), None)
    require(match is not None, f"no service center in '{city}' (parameter 'city'); cities with centers: {', '.join(cities)}",
            params=('city',), rejected=(city,), choices=tuple(cities))
    first = parse_day(start_date, "start_date")
    centers = [c.center_id for c in state.service_centers.values()
               if c.city == match and (service_type is None or service_type in c.services)]
    slots = _free_slots(state, centers, first, days)
    return SlotList.of(slots, offset, limit, city=match or city)


@tool(write=True, sensitive=("vehicle_id", "user_id"))
def wake_vehicle(state: VehicleState, vehicle_id: VehicleId, user_id: ActingUserId) -> VehicleStatus:
    """Wake an asleep vehicle so it accepts remote commands; offline vehicles cannot be woken."""
    veh = _allowed(state, vehicle_id, user_id, "guest", "waking the vehicle")
    require(veh.connectivity != "online", f"vehicle '{vehicle_id}' is already online; no need to wake it",
            reason='conflict', rejected=(vehicle_id,))
    require(veh.connectivity != "offline",
            f"vehicle '{vehicle_id}' is offline since {veh.last_seen} (no connection) and cannot be woken remotely",
            params=('since',), rejected=(vehicle_id, veh.last_seen))
    veh.connectivity, veh.last_seen = "online", state.advance()
    return _status(state, veh, user_id)


@tool(write=True, sensitive=("vehicle_id", "user_id"))
def lock_vehicle(state: VehicleState, vehicle_id: VehicleId, user_id: ActingUserId) -> VehicleStatus:
    """Lock all doors remotely; clears any open 'door unlocked' alert."""
    veh = _allowed(state, vehicle_id, user_id, "guest", "locking")
    _online(veh)
    require(not veh.locked, f"vehicle '{vehicle_id}' is already locked",
            reason='conflict', rejected=(vehicle_id,))
    veh.locked = True
    for a in state.alerts.values():
        if a.vehicle_id == vehicle_id and a.kind == "door_unlocked":
            a.resolved = True
    return _status(state, veh, user_id)


@tool(write=True, sensitive=("vehicle_id", "user_id"))
def unlock_vehicle(state: VehicleState, vehicle_id: VehicleId, user_id: ActingUserId) -> VehicleStatus:
    """Unlock the doors remotely (drivers and owners only; not while a software update installs)."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "unlocking")
    _online(veh)
    _not_installing(veh, "unlocking")
    require(veh.locked, f"vehicle '{vehicle_id}' is already unlocked",
            reason='conflict', rejected=(vehicle_id,))
    veh.locked = False
    return _status(state, veh, user_id)


@tool(write=True, sensitive=("vehicle_id", "user_id"))
def set_vehicle_climate(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    on: Annotated[bool, Field(description="True to start (or retarget) climate, false to stop it.")],
    target_temp_c: Annotated[float | None, Field(json_schema_extra=measure("temperature"), ge=MIN_CABIN_C, le=MAX_CABIN_C, description="Cabin target in °C (15-28, rounded to 0.5); only with on=true. Omit to keep the current target.")] = None,
) -> VehicleStatus:
    """Start or stop cabin climate remotely, optionally setting the cabin temperature."""
    veh = _allowed(state, vehicle_id, user_id, "guest", "climate control")
    require(on or target_temp_c is None, "target_temp_c applies only when turning climate on (on=true)",
            reason='state', params=('target_temp_c',))
    _online(veh)
    _not_installing(veh, "climate control")
    if not on:
        require(veh.climate_on, f"climate in '{vehicle_id}' is already off",
                reason='conflict', rejected=(vehicle_id,))
        veh.climate_on = False
        return _status(state, veh, user_id)
    target = veh.cabin_target_c if target_temp_c is None else round(target_temp_c * 2) / 2
    require(not (veh.climate_on and target == veh.cabin_target_c),
            f"climate in '{vehicle_id}' is already on at {veh.cabin_target_c} °C",
            reason='conflict', rejected=(vehicle_id, veh.cabin_target_c))
    level, what = (veh.battery_pct, "battery") if veh.ev else (veh.fuel_pct, "fuel")
    require((level or 0) >= MIN_CLIMATE_PCT,
            f"{what} of '{vehicle_id}' is at {level}%; remote climate needs at least {MIN_CLIMATE_PCT}%",
            reason='limit', rejected=(what, vehicle_id, level, MIN_CLIMATE_PCT))
    veh.climate_on, veh.cabin_target_c = True, target
    state.advance()
    return _status(state, veh, user_id)


@tool(write=True, sensitive=("vehicle_id", "user_id"))
def start_vehicle_charging(state: VehicleState, vehicle_id: VehicleId, user_id: ActingUserId) -> ChargingSession:
    """Start charging a plugged-in electric vehicle up to its charge limit; returns the new session."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "starting charging")
    _ev(veh, "charging")
    _online(veh)
    require(veh.plugged_in and veh.charger_type is not None, f"vehicle '{vehicle_id}' is not plugged in to a charger",
            rejected=(vehicle_id,))
    require(not veh.charging, f"vehicle '{vehicle_id}' is already charging "
            f"(session '{getattr(_active_session(state, vehicle_id), 'session_id', '?')}')",
            reason='conflict',
            rejected=(vehicle_id, getattr(_active_session(state, vehicle_id), 'session_id', '?')))
    require((veh.battery_pct or 0) < (veh.charge_limit_pct or 100),
            f"vehicle '{vehicle_id}' is at {veh.battery_pct}%, already at its charge limit of "
            f"{veh.charge_limit_pct}%; raise it with set_charge_limit to charge further",
            reason='conflict', params=('limit',),
            rejected=(vehicle_id, veh.battery_pct, veh.charge_limit_pct))
    assert veh.charger_type is not None and veh.battery_pct is not None
    veh.charging = True
    session = ChargingSession(session_id=state.new_id("CHG"), vehicle_id=vehicle_id, status="active",
                              charger_type=veh.charger_type, city=veh.city, started_at=state.advance(),
                              start_pct=veh.battery_pct, energy_kwh=0.0, cost_eur=0.0)
    state.charging_sessions[session.session_id] = session
    return session


@tool(write=True, sensitive=("vehicle_id", "user_id"))
def stop_vehicle_charging(state: VehicleState, vehicle_id: VehicleId, user_id: ActingUserId) -> ChargingSession:
    """Stop an electric vehicle's charging now; returns the completed session."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "stopping charging")
    _ev(veh, "charging")
    _online(veh)
    session = _active_session(state, vehicle_id)
    require(veh.charging and session is not None, f"vehicle '{vehicle_id}' is not charging",
            rejected=(vehicle_id,))
    assert session is not None
    state.advance()
    return _finish_session(state, veh, session)


@tool(write=True, sensitive=("vehicle_id", "user_id"))
def set_charge_limit(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    charge_limit_pct: Annotated[int, Field(json_schema_extra=measure("percent"), ge=MIN_CHARGE_LIMIT, le=MAX_CHARGE_LIMIT, description="New charge limit, 50-100 percent.")],
) -> ChargeSettings:
    """Set where an electric vehicle stops charging; a limit at or below the battery level ends charging."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "changing the charge limit")
    _ev(veh, "a charge limit")
    _online(veh)
    require(veh.charge_limit_pct != charge_limit_pct, f"charge limit of '{vehicle_id}' is already {charge_limit_pct}%",
            reason='conflict', params=('limit',), rejected=(vehicle_id, charge_limit_pct))
    veh.charge_limit_pct = charge_limit_pct
    stopped, session = None, _active_session(state, vehicle_id)
    if veh.charging and session is not None and (veh.battery_pct or 0) >= charge_limit_pct:
        stopped = _finish_session(state, veh, session).session_id
    return ChargeSettings(vehicle_id=vehicle_id, charge_limit_pct=charge_limit_pct, battery_pct=veh.battery_pct or 0,
                          charging=veh.charging, stopped_session_id=stopped)


@tool(write=True, sensitive=("vehicle_id", "user_id", "center_id", "start"))
def book_vehicle_service(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    center_id: entity_id("service_center", "Service center id, e.g. 'CTR-0002' (from find_vehicle_service_slots).", example="CTR-0002"),
    start: moment("Slot start, as listed by find_vehicle_service_slots.", listed="start"),
    service_type: Annotated[ServiceType, Field(description="What the workshop should do.")],
    notes: text("body", "Optional note for the workshop.", listed="notes", max_length=300) = "",
) -> ServiceAppointment:
    """Book a service appointment for a vehicle in a free slot (drivers and owners; one upcoming per vehicle)."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "booking service")
    center = find(state.service_centers, center_id, hint="find centers and free slots with find_vehicle_service_slots")
    require(service_type in center.services,
            f"{center.name} ({center_id}) does not offer {service_type}; it offers: {', '.join(center.services)}",
            rejected=(center.name, service_type), choices=tuple(center.services))
    require(not (veh.ev and service_type == "oil_change"), f"'{vehicle_id}' is electric and needs no oil change",
            reason='missing', rejected=(vehicle_id,))
    when = parse_moment(start, "start")
    if when.second == 0:
        start = when.isoformat(timespec="minutes")
    require(start > state.now, f"start {start} is not in the future (now {state.now})",
            reason='future', params=('start',), rejected=(start, state.now))
    require(when <= state.now_dt() + timedelta(days=BOOKING_HORIZON_DAYS),
            f"start {start} is more than {BOOKING_HORIZON_DAYS} days ahead; book a nearer date",
            reason='limit', params=('days', 'start'), rejected=(start, BOOKING_HORIZON_DAYS))
    require(when.weekday() < 5 and start[11:] in center.slot_times,
            f"{center.name} takes appointments Monday-Friday at {', '.join(center.slot_times)}; "
            f"{start} is not one of its slots",
            rejected=(center.name, start), choices=tuple(center.slot_times))
    free = _free_slots(state, [center_id], when.date(), 1)
    require(any(s.start == start for s in free),
            f"slot {start} at {center.name} is already taken; free slots that day: "
            f"{', '.join(s.start[11:] for s in free) or '(none)'}",
            reason='conflict', rejected=(start, center.name),
            choices=tuple(s.start[11:] for s in free))
    booked = _upcoming(state, vehicle_id)
    require(booked is None, f"vehicle '{vehicle_id}' already has appointment "
            f"'{booked.appointment_id if booked else ''}' on {booked.start if booked else ''}; "
            "only one upcoming appointment per vehicle",
            reason='state', rejected=(vehicle_id, booked.appointment_id if booked else ''))
    appt = ServiceAppointment(appointment_id=state.new_id("SVC"), vehicle_id=vehicle_id, center_id=center_id,
                              start=start, service_type=service_type, status="booked", booked_by=user_id,
                              notes=notes.strip())
    state.appointments[appt.appointment_id] = appt
    return appt


@tool(write=True, sensitive=("vehicle_id", "user_id", "valet_pin"))
def set_valet_mode(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    enabled: Annotated[bool, Field(description="True to turn valet mode on, false to turn it off.")],
    valet_pin: text("word", "4-digit PIN: chosen when turning on, required to turn off."),
) -> VehicleStatus:
    """Turn valet mode (limited speed, locked glovebox) on with a new 4-digit PIN, or off with that PIN."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "valet mode")
    require(len(valet_pin) == 4 and valet_pin.isdigit(), "valet_pin must be exactly 4 digits",
            params=('valet_pin',))
    _online(veh)
    _not_installing(veh, "valet mode")
    if enabled:
        require(not veh.valet_mode, f"valet mode is already on for '{vehicle_id}'; turn it off with its PIN first",
                reason='conflict', rejected=(vehicle_id,))
        veh.valet_mode, veh.valet_pin = True, valet_pin
    else:
        require(veh.valet_mode, f"valet mode is not on for '{vehicle_id}'", rejected=(vehicle_id,))
        require(valet_pin == veh.valet_pin, f"valet PIN is wrong for '{vehicle_id}' (parameter 'valet_pin')",
                params=('valet_pin',), rejected=(vehicle_id,))
        veh.valet_mode, veh.valet_pin = False, None
    return _status(state, veh, user_id)


@tool(write=True, sensitive=("vehicle_id", "user_id", "recipient_email"))
def share_vehicle_access(
    state: VehicleState,
    vehicle_id: VehicleId,
    user_id: ActingUserId,
    recipient_email: text("word", "Email of the app user to share with."),
    permission: Annotated[SharePermission, Field(description="driver: drive, unlock and charge; guest: view, lock and climate only.")],
) -> AccessList:
    """Share a vehicle with another app user; owners grant driver or guest access, drivers grant guest only."""
    veh = _allowed(state, vehicle_id, user_id, "driver", "sharing access")
    mine = _grant(veh, user_id)
    assert mine is not None
    require(mine.permission == "owner" or permission == "guest",
            f"user '{user_id}' is a driver of '{vehicle_id}' and can share guest access only; "
            "ask the owner to grant driver access", rejected=(user_id, vehicle_id))
    target = recipient_email.strip().lower()
    recipient = next((u for u in state.users.values() if u.email.lower() == target), None)
    require(recipient is not None,
            f"no app user with email '{recipient_email}' (parameter 'recipient_email'); they must sign up first",
            params=('recipient_email',), rejected=(recipient_email,))
    assert recipient is not None
    had = _grant(veh, recipient.user_id)
    require(had is None, f"{recipient.name} ({recipient.user_id}) already has {had.permission if had else ''} "
            f"access to '{vehicle_id}'", reason='conflict', rejected=(recipient.name, vehicle_id))
    veh.access.append(AccessGrant(user_id=recipient.user_id, permission=permission, granted_at=state.now,
                                  granted_by=user_id))
    return AccessList(vehicle_id=vehicle_id, access=_entries(state, veh))
