"""Connected-vehicle server state: app users, vehicles and access, trips, charging, alerts, service."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, entity_id, naming
from prove.env.world import days_before, email, iso, person, phone, shift

Permission = Literal["owner", "driver", "guest"]
SharePermission = Literal["driver", "guest"]
Connectivity = Literal["online", "asleep", "offline"]
UpdateStatus = Literal["up_to_date", "available", "installing"]
ChargerType = Literal["home_ac", "public_ac", "dc_fast"]
SessionStatus = Literal["active", "completed"]
AlertKind = Literal["tire_pressure_low", "service_due", "battery_low", "software_update", "door_unlocked",
                    "charging_interrupted", "geofence_exit"]
Severity = Literal["info", "warning", "critical"]
ServiceType = Literal["annual_inspection", "tire_service", "brake_service", "battery_check", "oil_change",
                      "software_diagnostics", "wheel_alignment"]
AppointmentStatus = Literal["booked", "completed", "cancelled"]
TirePosition = Literal["front_left", "front_right", "rear_left", "rear_right"]

PERMISSION_RANK: dict[str, int] = {"guest": 1, "driver": 2, "owner": 3}
MIN_CLIMATE_PCT = 10
"""Below this battery (or fuel) percentage the vehicle refuses to run climate remotely."""
MIN_CHARGE_LIMIT, MAX_CHARGE_LIMIT = 50, 100
MIN_CABIN_C, MAX_CABIN_C = 15.0, 28.0
LOW_TIRE_MARGIN = 0.3
"""A tire is low when it is this many bar below the recommended pressure."""
BOOKING_HORIZON_DAYS = 60
COST_PER_KWH: dict[str, float] = {"home_ac": 0.3, "public_ac": 0.45, "dc_fast": 0.65}

UserId = entity_id("user", "App user id, e.g. 'USR-0002'.", example="USR-0002")
VehicleId = entity_id("vehicle", "Vehicle id, e.g. 'VEH-0003' (from list_my_vehicles).", example="VEH-0003")
TripId = entity_id("trip", "Trip id, e.g. 'TRP-0040'.", example="TRP-0040")
SessionId = entity_id("charging_session", "Charging session id, e.g. 'CHG-0012'.", example="CHG-0012")
AlertId = entity_id("alert", "Vehicle alert id, e.g. 'ALR-0005'.", example="ALR-0005")
CenterId = entity_id("service_center", "Service center id, e.g. 'CTR-0002'.", example="CTR-0002")
AppointmentId = entity_id("service_appointment", "Service appointment id, e.g. 'SVC-0004'.", example="SVC-0004")


class AppUser(Record):
    user_id: UserId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    phone: str
    city: str


class AccessGrant(Record):
    user_id: UserId
    permission: Permission
    granted_at: str
    granted_by: UserId | None = Field(None, description="Who shared the access; None for the owner.")


class TirePressures(Record):
    front_left: float = Field(description="Bar.")
    front_right: float
    rear_left: float
    rear_right: float


class Vehicle(Record):
    vehicle_id: VehicleId
    vin: str = Field(description="17-character vehicle identification number.")
    nickname: str = Field(json_schema_extra=naming("name"))
    model: str
    model_year: int
    ev: bool
    odometer_km: int
    battery_pct: int | None = Field(None, description="Electric vehicles: state of charge.")
    fuel_pct: int | None = Field(None, description="Combustion vehicles: tank level.")
    range_km: int
    charge_limit_pct: int | None = Field(None, description="Electric vehicles: charging stops here.")
    plugged_in: bool = False
    charger_type: ChargerType | None = Field(None, description="What the plugged-in vehicle is connected to.")
    charging: bool = False
    city: str
    lat: float
    lon: float
    locked: bool
    climate_on: bool
    cabin_target_c: float
    inside_temp_c: float
    tires: TirePressures
    recommended_tire_bar: float
    tires_measured_at: str
    software_version: str
    update_status: UpdateStatus
    update_version: str | None = None
    update_finishes_at: str | None = Field(None, description="While installing: when the car is usable again.")
    connectivity: Connectivity
    last_seen: str
    valet_mode: bool = False
    valet_pin: str | None = Field(None, description="4-digit PIN that turns valet mode off again.")
    access: list[AccessGrant]


class Trip(Record):
    trip_id: TripId
    vehicle_id: VehicleId
    driver_id: UserId
    started_at: str
    ended_at: str
    start_place: str
    end_place: str
    city: str
    distance_km: float
    energy_kwh: float | None = Field(None, description="Electric vehicles.")
    fuel_l: float | None = Field(None, description="Combustion vehicles.")
    avg_speed_kmh: float


class ChargingSession(Record):
    session_id: SessionId
    vehicle_id: VehicleId
    status: SessionStatus
    charger_type: ChargerType
    city: str
    started_at: str
    ended_at: str | None = None
    start_pct: int
    end_pct: int | None = None
    energy_kwh: float
    cost_eur: float = Field(json_schema_extra={MONEY: True})


class Alert(Record):
    alert_id: AlertId
    vehicle_id: VehicleId
    kind: AlertKind
    severity: Severity
    message: str
    created_at: str
    resolved: bool = False


class ServiceCenter(Record):
    center_id: CenterId
    name: str = Field(json_schema_extra=naming("name"))
    city: str
    address: str
    services: list[ServiceType]
    slot_times: list[str] = Field(description="Appointment start times (HH:MM) offered Monday to Friday.")


class ServiceAppointment(Record):
    appointment_id: AppointmentId
    vehicle_id: VehicleId
    center_id: CenterId
    start: str
    service_type: ServiceType
    status: AppointmentStatus
    booked_by: UserId
    notes: str = ""


class VehicleState(ServerState):
    users: dict[str, AppUser] = Field(default_factory=dict)
    vehicles: dict[str, Vehicle] = Field(default_factory=dict)
    trips: dict[str, Trip] = Field(default_factory=dict)
    charging_sessions: dict[str, ChargingSession] = Field(default_factory=dict)
    alerts: dict[str, Alert] = Field(default_factory=dict)
    service_centers: dict[str, ServiceCenter] = Field(default_factory=dict)
    appointments: dict[str, ServiceAppointment] = Field(default_factory=dict)


# model: (electric, battery kWh or tank litres, full range km, recommended tire bar)
MODELS: dict[str, tuple[bool, int, int, float]] = {
    "Voltara E3": (True, 60, 450, 2.9),
    "Voltara E5 SUV": (True, 82, 520, 3.0),
    "Voltara E7 Sport": (True, 100, 610, 3.1),
    "Voltara C4": (False, 50, 750, 2.4),
    "Voltara T6 Wagon": (False, 60, 820, 2.5),
}
CITY_COORDS: dict[str, tuple[float, float]] = {
    "Amsterdam": (52.370, 4.895), "Berlin": (52.520, 13.405), "Copenhagen": (55.676, 12.568),
    "London": (51.507, -0.128), "Madrid": (40.417, -3.704), "Milan": (45.464, 9.190),
    "Munich": (48.137, 11.575), "Oslo": (59.913, 10.752), "Paris": (48.857, 2.352),
    "Prague": (50.075, 14.438), "Vienna": (48.208, 16.373), "Zurich": (47.377, 8.541),
}
_PLACES = ("Home", "Office", "Airport", "Supermarket", "Gym", "City Center", "Train Station", "School",
           "Mall", "Lakeside", "Parents", "Stadium")
_NICKNAMES = ("Daily Driver", "Family Car", "Blue Bolt", "Weekend Cruiser", "Work Car", "Silver Arrow",
              "The Tank", "Sparky", "Road Runner", "Commuter")
_SLOT_TIMES = ("08:00", "10:00", "13:00", "15:00")
_SERVICES: tuple[ServiceType, ...] = ("annual_inspection", "tire_service", "brake_service", "battery_check",
                                      "oil_change", "software_diagnostics", "wheel_alignment")


def _vin(rng: random.Random) -> str:
    chars = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
    return "WVT" + "".join(rng.choice(chars) for _ in range(14))


def _jitter(rng: random.Random, city: str) -> tuple[float, float]:
    lat, lon = CITY_COORDS[city]
    return round(lat + rng.uniform(-0.04, 0.04), 4), round(lon + rng.uniform(-0.06, 0.06), 4)


def initial_state(seed: int) -> VehicleState:
    """A connected-car service with ~20 users, ~24 vehicles, ~260 trips; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-05-12T07:45"
    state = VehicleState(now=now)
    now_dt = state.now_dt()
    cities = list(CITY_COORDS)
    usr_id, veh_id, trp_id, chg_id = Counter("USR"), Counter("VEH"), Counter("TRP"), Counter("CHG")
    alr_id, ctr_id, svc_id = Counter("ALR"), Counter("CTR"), Counter("SVC")
    for _ in range(rng.randrange(18, 24)):
        name, uid = person(rng), usr_id()
        state.users[uid] = AppUser(user_id=uid, name=name, email=email(name, "drivemail.example.com"),
                                   phone=phone(rng), city=rng.choice(cities))
    uids = list(state.users)
    # Collisions in generated emails would make share_vehicle_access ambiguous: number the repeats.
    seen: dict[str, int] = {}
    for user in state.users.values():
        seen[user.email] = seen.get(user.email, 0) + 1
        if seen[user.email] > 1:
            user.email = user.email.replace("@", f"{seen[user.email]}@")

    def alert(vid: str, kind: AlertKind, severity: Severity, message: str, at: str, resolved: bool = False) -> None:
        aid = alr_id()
        state.alerts[aid] = Alert(alert_id=aid, vehicle_id=vid, kind=kind, severity=severity, message=message,
                                  created_at=at, resolved=resolved)

    for owner in uids:
        for _ in range(rng.choices([0, 1, 2], weights=[1, 6, 3])[0]):
            model = rng.choice(list(MODELS))
            ev, capacity, full_range, bar = MODELS[model]
            city = state.users[owner].city if rng.random() < 0.85 else rng.choice(cities)
            vid, (lat, lon) = veh_id(), _jitter(rng, city)
            year = rng.randrange(2019, 2027)
            level = rng.randrange(5, 101)
            limit = rng.choice([70, 80, 80, 90, 100]) if ev else None
            if limit is not None:
                level = min(level, limit)
            plugged = ev and rng.random() < 0.4
            charging = plugged and limit is not None and level < limit and rng.random() < 0.5
            conn: Connectivity = "online" if charging else rng.choices(
                ["online", "asleep", "offline"], weights=[4, 5, 1])[0]
            update: UpdateStatus = rng.choices(["up_to_date", "available", "installing"], weights=[14, 4, 1])[0]
            if update == "installing":
                conn = "online"
            tires = [round(bar + rng.uniform(-0.15, 0.15), 1) for _ in range(4)]
            if rng.random() < 0.18:
                tires[rng.randrange(4)] = round(bar - rng.uniform(0.45, 0.8), 1)
            major, minor = rng.randrange(2, 12), rng.randrange(1, 6)
            grants = [AccessGrant(user_id=owner, permission="owner", granted_at=days_before(now, rng, 1500, 200))]
            others = rng.sample([u for u in uids if u != owner], rng.choices([0, 1, 2, 3], weights=[3, 4, 2, 1])[0])
            for other in others:
                grants.append(AccessGrant(user_id=other, permission=rng.choice(["driver", "guest"]),
                                          granted_at=days_before(now, rng, 190, 1), granted_by=owner))
            valet = conn == "online" and update != "installing" and rng.random() < 0.1
            state.vehicles[vid] = Vehicle(
                vehicle_id=vid, vin=_vin(rng), nickname=rng.choice(_NICKNAMES), model=model, model_year=year,
                ev=ev, odometer_km=rng.randrange(800, 14000) * (2027 - year), battery_pct=level if ev else None,
                fuel_pct=None if ev else level, range_km=round(full_range * level / 100), charge_limit_pct=limit,
                plugged_in=plugged, charger_type=rng.choice(["home_ac", "home_ac", "public_ac", "dc_fast"]) if plugged else None,
                charging=charging, city=city, lat=lat, lon=lon, locked=rng.random() < 0.8, climate_on=False,
                cabin_target_c=rng.choice([20.0, 21.0, 21.5, 22.0]), inside_temp_c=round(rng.uniform(6, 24), 1),
                tires=TirePressures(front_left=tires[0], front_right=tires[1], rear_left=tires[2], rear_right=tires[3]),
                recommended_tire_bar=bar, tires_measured_at=days_before(now, rng, 3),
                software_version=f"2026.{major}.{minor}", update_status=update,
                update_version=None if update == "up_to_date" else f"2026.{major + 1}.1",
                update_finishes_at=shift(now, minutes=rng.randrange(15, 50)) if update == "installing" else None,
                connectivity=conn, last_seen=now if conn == "online" else days_before(now, rng, 5 if conn == "offline" else 1),
                valet_mode=valet, valet_pin=f"{rng.randrange(10000):04d}" if valet else None, access=grants,
            )
            veh = state.vehicles[vid]
            drivers = [g.user_id for g in grants if g.permission != "guest"]
            stamps = sorted(days_before(now, rng, 30) for _ in range(rng.randrange(6, 17)))
            for start in stamps:
                dist = round(rng.choice([rng.uniform(2, 25), rng.uniform(2, 25), rng.uniform(20, 180)]), 1)
                speed = round(rng.uniform(22, 38) if dist < 30 else rng.uniform(55, 95), 1)
                tid = trp_id()
                state.trips[tid] = Trip(
                    trip_id=tid, vehicle_id=vid, driver_id=rng.choice(drivers), started_at=start,
                    ended_at=iso(min(datetime.fromisoformat(start) + timedelta(minutes=round(dist / speed * 60) + 1), now_dt)),
                    start_place=rng.choice(_PLACES), end_place=rng.choice(_PLACES), city=city, distance_km=dist,
                    energy_kwh=round(dist * rng.uniform(0.14, 0.21), 1) if ev else None,
                    fuel_l=None if ev else round(dist * rng.uniform(0.055, 0.085), 1), avg_speed_kmh=speed,
                )
            if ev:
                for start in sorted(days_before(now, rng, 30, 1) for _ in range(rng.randrange(2, 7))):
                    kind: ChargerType = rng.choice(["home_ac", "home_ac", "public_ac", "dc_fast"])
                    lo = rng.randrange(8, 60)
                    hi = rng.randrange(lo + 10, min(lo + 70, 100) + 1)
                    kwh = round((hi - lo) * capacity / 100, 1)
                    hours = kwh / (7 if kind == "home_ac" else 11 if kind == "public_ac" else 120)
                    sid = chg_id()
                    state.charging_sessions[sid] = ChargingSession(
                        session_id=sid, vehicle_id=vid, status="completed", charger_type=kind, city=city,
                        started_at=start, ended_at=shift(start, hours=hours),
                        start_pct=lo, end_pct=hi, energy_kwh=kwh, cost_eur=round(kwh * COST_PER_KWH[kind], 2),
                    )
                if charging and veh.charger_type is not None:
                    sid = chg_id()
                    state.charging_sessions[sid] = ChargingSession(
                        session_id=sid, vehicle_id=vid, status="active", charger_type=veh.charger_type, city=city,
                        started_at=now[:11] + "06:30", start_pct=max(5, level - 12),
                        energy_kwh=round(min(12, level - 5) * capacity / 100, 1), cost_eur=0.0,
                    )
                if level < 15:
                    alert(vid, "battery_low", "warning", f"Battery at {level}%; range {veh.range_km} km.",
                          days_before(now, rng, 1))
            low = [p for p, v in veh.tires.model_dump().items() if v < bar - LOW_TIRE_MARGIN]
            for pos in low:
                alert(vid, "tire_pressure_low", "critical" if getattr(veh.tires, pos) < bar - 0.6 else "warning",
                      f"{pos.replace('_', ' ').capitalize()} tire at {getattr(veh.tires, pos)} bar "
                      f"(recommended {bar}).", veh.tires_measured_at)
            if update != "up_to_date":
                alert(vid, "software_update", "info", f"Software {veh.update_version} is "
                      f"{'installing' if update == 'installing' else 'ready to install'}.", days_before(now, rng, 6))
            if not veh.locked:
                alert(vid, "door_unlocked", "warning", "Vehicle has been unlocked for over 10 minutes.",
                      min(veh.last_seen, now[:11] + "07:10"))
            if rng.random() < 0.2:
                alert(vid, "service_due", "warning", "Annual inspection due within 30 days.", days_before(now, rng, 20))
            if rng.random() < 0.3:
                kind_old: AlertKind = rng.choice(["charging_interrupted", "geofence_exit"]) if ev else "geofence_exit"
                text = "Charging stopped unexpectedly." if kind_old == "charging_interrupted" else "Left the 'Home' area."
                alert(vid, kind_old, "info", text, days_before(now, rng, 25, 2), resolved=True)
    # Service centers in the cities where vehicles are, with a partly booked calendar.
    center_cities = sorted({v.city for v in state.vehicles.values()})
    for city in center_cities:
        cid = ctr_id()
        services = [s for s in _SERVICES if rng.random() < 0.8] or ["annual_inspection"]
        state.service_centers[cid] = ServiceCenter(
            center_id=cid, name=f"Voltara Service {city}", city=city,
            address=f"{rng.randrange(1, 200)} {rng.choice(('Ring Road', 'Motor Way', 'Industrial Park', 'Harbor Road'))}",
            services=services, slot_times=list(_SLOT_TIMES[: rng.choice([3, 4])]),
        )
    weekdays = [d for d in (now_dt.date() + timedelta(days=i) for i in range(1, 11)) if d.weekday() < 5]
    for vid, veh in state.vehicles.items():
        center = next(c for c in state.service_centers.values() if c.city == veh.city)
        fits = [s for s in center.services if not (veh.ev and s == "oil_change")] or ["annual_inspection"]
        if rng.random() < 0.3:
            day = rng.choice(weekdays).isoformat()
            start = f"{day}T{rng.choice(center.slot_times)}"
            if not any(a.center_id == center.center_id and a.start == start for a in state.appointments.values()):
                aid = svc_id()
                state.appointments[aid] = ServiceAppointment(
                    appointment_id=aid, vehicle_id=vid, center_id=center.center_id, start=start,
                    service_type=rng.choice(fits), status="booked", booked_by=veh.access[0].user_id,
                )
        if rng.random() < 0.3:
            aid = svc_id()
            state.appointments[aid] = ServiceAppointment(
                appointment_id=aid, vehicle_id=vid, center_id=center.center_id,
                start=days_before(now, rng, 200, 20)[:11] + rng.choice(center.slot_times),
                service_type=rng.choice(fits), status="completed", booked_by=veh.access[0].user_id,
            )
    return state
