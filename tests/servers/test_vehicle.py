"""Vehicle server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.vehicle import SERVER
from prove_servers.vehicle.state import (
    AccessGrant,
    Alert,
    AppUser,
    ChargingSession,
    ServiceAppointment,
    ServiceCenter,
    TirePressures,
    Trip,
    Vehicle,
    VehicleState,
)

ADA, BO, CY, DEE = (f"USR-000{i}" for i in range(1, 5))


def _vehicle(vid: str, model: str, ev: bool, level: int, access: list[tuple[str, str]], **kw) -> Vehicle:
    base = dict(
        vehicle_id=vid, vin=f"WVT00000000000{vid[-3:]}", nickname=f"car {vid[-1]}", model=model, model_year=2024,
        ev=ev, odometer_km=12000, battery_pct=level if ev else None, fuel_pct=None if ev else level,
        range_km=level * 5, charge_limit_pct=80 if ev else None, city="Berlin", lat=52.52, lon=13.4, locked=True,
        climate_on=False, cabin_target_c=21.0, inside_temp_c=12.0,
        tires=TirePressures(front_left=3.0, front_right=3.0, rear_left=3.0, rear_right=3.0),
        recommended_tire_bar=3.0, tires_measured_at="2026-05-11T20:00", software_version="2026.4.2",
        update_status="up_to_date", connectivity="online", last_seen="2026-05-12T07:45",
        access=[AccessGrant(user_id=u, permission=p, granted_at="2025-01-01T10:00") for u, p in access],
    )
    return Vehicle(**{**base, **kw})


def tiny() -> VehicleState:
    s = VehicleState(now="2026-05-12T07:45")  # a Tuesday
    for uid, name in ((ADA, "Ada Chen"), (BO, "Bo Silva"), (CY, "Cy Ito"), (DEE, "Dee Okafor")):
        s.users[uid] = AppUser(user_id=uid, name=name, email=f"{name.split()[0].lower()}@x.com",
                               phone="+1-555-100-1000", city="Berlin")
    s.vehicles["VEH-0001"] = _vehicle(
        "VEH-0001", "Voltara E5 SUV", True, 60, [(ADA, "owner"), (BO, "driver"), (CY, "guest")],
        plugged_in=True, charger_type="home_ac",
        tires=TirePressures(front_left=3.0, front_right=2.9, rear_left=2.4, rear_right=3.1))
    s.vehicles["VEH-0002"] = _vehicle("VEH-0002", "Voltara C4", False, 40, [(ADA, "owner")], locked=False,
                                      connectivity="asleep", last_seen="2026-05-12T01:00", update_status="available",
                                      update_version="2026.5.1", recommended_tire_bar=2.4,
                                      tires=TirePressures(front_left=2.4, front_right=2.4, rear_left=2.4, rear_right=2.4))
    s.vehicles["VEH-0003"] = _vehicle("VEH-0003", "Voltara E3", True, 8, [(CY, "owner"), (BO, "guest")],
                                      plugged_in=True, charger_type="dc_fast", charging=True, valet_mode=True,
                                      valet_pin="1234")
    s.vehicles["VEH-0004"] = _vehicle("VEH-0004", "Voltara E7 Sport", True, 90, [(ADA, "owner")],
                                      charge_limit_pct=90, update_status="installing", update_version="2026.5.1",
                                      update_finishes_at="2026-05-12T08:30")
    s.vehicles["VEH-0005"] = _vehicle("VEH-0005", "Voltara C4", False, 70, [(ADA, "owner")],
                                      connectivity="offline", last_seen="2026-05-09T18:00")
    for i, (driver, day, km) in enumerate([(ADA, "05-01", 12.5), (BO, "05-05", 140.0), (ADA, "05-10", 8.0),
                                           (BO, "05-11", 30.5)]):
        tid = f"TRP-000{i + 1}"
        s.trips[tid] = Trip(trip_id=tid, vehicle_id="VEH-0001", driver_id=driver, started_at=f"2026-{day}T08:00",
                            ended_at=f"2026-{day}T09:00", start_place="Home", end_place="Office", city="Berlin",
                            distance_km=km, energy_kwh=round(km * 0.18, 1), avg_speed_kmh=40.0)
    s.charging_sessions["CHG-0001"] = ChargingSession(
        session_id="CHG-0001", vehicle_id="VEH-0001", status="completed", charger_type="home_ac", city="Berlin",
        started_at="2026-05-08T22:00", ended_at="2026-05-09T04:00", start_pct=20, end_pct=70, energy_kwh=41.0,
        cost_eur=12.3)
    s.charging_sessions["CHG-0002"] = ChargingSession(
        session_id="CHG-0002", vehicle_id="VEH-0003", status="active", charger_type="dc_fast", city="Berlin",
        started_at="2026-05-12T07:30", start_pct=5, energy_kwh=0.0, cost_eur=0.0)
    alerts = [("VEH-0001", "tire_pressure_low", "warning", False), ("VEH-0002", "door_unlocked", "warning", False),
              ("VEH-0001", "geofence_exit", "info", True)]
    for i, (vid, kind, severity, resolved) in enumerate(alerts):
        aid = f"ALR-000{i + 1}"
        s.alerts[aid] = Alert(alert_id=aid, vehicle_id=vid, kind=kind, severity=severity, message=kind,
                              created_at=f"2026-05-1{i}T07:00", resolved=resolved)
    centers = [("CTR-0001", "Berlin", ["annual_inspection", "tire_service", "oil_change"], ["08:00", "10:00"]),
               ("CTR-0002", "Berlin", ["battery_check"], ["13:00"]), ("CTR-0003", "Paris", ["tire_service"], ["09:00"])]
    for cid, city, services, times in centers:
        s.service_centers[cid] = ServiceCenter(center_id=cid, name=f"Voltara Service {city} {cid[-1]}", city=city,
                                               address="1 Ring Road", services=services, slot_times=times)
    s.appointments["SVC-0001"] = ServiceAppointment(
        appointment_id="SVC-0001", vehicle_id="VEH-0002", center_id="CTR-0001", start="2026-05-13T08:00",
        service_type="oil_change", status="booked", booked_by=ADA)
    s.appointments["SVC-0002"] = ServiceAppointment(
        appointment_id="SVC-0002", vehicle_id="VEH-0001", center_id="CTR-0001", start="2026-02-02T10:00",
        service_type="tire_service", status="completed", booked_by=ADA)
    return s


hub = hub_fixture(SERVER, tiny)


def test_list_and_status(hub: Hub) -> None:
    mine = ok(hub, "list_my_vehicles", user_id=ADA)
    assert [v["vehicle_id"] for v in mine["vehicles"]] == ["VEH-0001", "VEH-0002", "VEH-0004", "VEH-0005"]
    assert [(v["vehicle_id"], v["your_permission"]) for v in ok(hub, "list_my_vehicles", user_id=BO)["vehicles"]] == [
        ("VEH-0001", "driver"), ("VEH-0003", "guest")]
    assert ok(hub, "list_my_vehicles", user_id=BO, permission="guest")["total"] == 1
    assert ok(hub, "list_my_vehicles", user_id=DEE)["total"] == 0
    fails(hub, "list_my_vehicles", "user 'USR-0009' not found", "USR-0001", user_id="USR-0009")
    fails(hub, "list_my_vehicles", "permission", "'owner', 'driver' or 'guest'", user_id=ADA, permission="admin")
    st = ok(hub, "get_vehicle_status", vehicle_id="VEH-0001", user_id=CY)
    assert (st["your_permission"], st["low_tires"], st["open_alerts"]) == ("guest", ["rear_left"], 1)
    assert [(a["user_id"], a["permission"]) for a in st["access"]] == [(ADA, "owner"), (BO, "driver"), (CY, "guest")]
    assert "valet_pin" not in ok(hub, "get_vehicle_status", vehicle_id="VEH-0003", user_id=CY)
    assert ok(hub, "get_vehicle_status", vehicle_id="VEH-0002", user_id=ADA)["upcoming_appointment"][
        "appointment_id"] == "SVC-0001"
    fails(hub, "get_vehicle_status", "no access to vehicle 'VEH-0001'", "their vehicles: (none)",
          vehicle_id="VEH-0001", user_id=DEE)
    fails(hub, "get_vehicle_status", "vehicle 'VEH-0009' not found", "list_my_vehicles", vehicle_id="VEH-0009", user_id=ADA)


def test_tires_and_alerts(hub: Hub) -> None:
    tires = ok(hub, "get_tire_pressures", vehicle_id="VEH-0001", user_id=BO)
    assert tires["any_low"] and tires["low_below_bar"] == 2.7
    assert [t["position"] for t in tires["tires"] if t["low"]] == ["rear_left"]
    assert not ok(hub, "get_tire_pressures", vehicle_id="VEH-0002", user_id=ADA)["any_low"]
    fails(hub, "get_tire_pressures", "no access", "VEH-0001, VEH-0003", vehicle_id="VEH-0002", user_id=BO)
    assert [a["alert_id"] for a in ok(hub, "list_vehicle_alerts", vehicle_id="VEH-0001", user_id=CY)["alerts"]] == ["ALR-0001"]
    assert ok(hub, "list_vehicle_alerts", vehicle_id="VEH-0001", user_id=ADA, include_resolved=True)["total"] == 2
    assert ok(hub, "list_vehicle_alerts", vehicle_id="VEH-0001", user_id=ADA, severity="critical")["total"] == 0
    fails(hub, "list_vehicle_alerts", "severity", vehicle_id="VEH-0001", user_id=ADA, severity="urgent")


def test_trips_and_charging_history(hub: Hub) -> None:
    trips = ok(hub, "list_vehicle_trips", vehicle_id="VEH-0001", user_id=BO)
    assert [t["trip_id"] for t in trips["trips"]] == ["TRP-0004", "TRP-0003", "TRP-0002", "TRP-0001"]
    assert trips["total_distance_km"] == 191.0
    assert ok(hub, "list_vehicle_trips", vehicle_id="VEH-0001", user_id=ADA, driver_id=BO)["total"] == 2
    assert ok(hub, "list_vehicle_trips", vehicle_id="VEH-0001", user_id=ADA, since="2026-05-05")["total"] == 3
    assert ok(hub, "list_vehicle_trips", vehicle_id="VEH-0001", user_id=ADA, min_distance_km=100)["total"] == 1
    page = ok(hub, "list_vehicle_trips", vehicle_id="VEH-0001", user_id=ADA, limit=3)
    assert page["next_offset"] == 3 and page["total_distance_km"] == 191.0
    fails(hub, "list_vehicle_trips", "guest access", "driver or owner", vehicle_id="VEH-0001", user_id=CY)
    fails(hub, "list_vehicle_trips", "since must be a date", vehicle_id="VEH-0001", user_id=ADA, since="May 5")
    chg = ok(hub, "list_vehicle_charging_sessions", vehicle_id="VEH-0001", user_id=ADA)
    assert (chg["total"], chg["total_energy_kwh"], chg["total_cost_eur"]) == (1, 41.0, 12.3)
    assert ok(hub, "list_vehicle_charging_sessions", vehicle_id="VEH-0001", user_id=ADA, charger_type="dc_fast")["total"] == 0
    fails(hub, "list_vehicle_charging_sessions", "not electric", vehicle_id="VEH-0002", user_id=ADA)


def test_service_slots(hub: Hub) -> None:
    slots = ok(hub, "find_vehicle_service_slots", city="berlin", start_date="2026-05-12", days=2)
    assert [(s["center_id"], s["start"]) for s in slots["slots"]] == [
        ("CTR-0001", "2026-05-12T08:00"), ("CTR-0001", "2026-05-12T10:00"), ("CTR-0002", "2026-05-12T13:00"),
        ("CTR-0001", "2026-05-13T10:00"), ("CTR-0002", "2026-05-13T13:00")]
    assert ok(hub, "find_vehicle_service_slots", city="Berlin", start_date="2026-05-12", days=2,
              service_type="battery_check")["total"] == 2
    assert ok(hub, "find_vehicle_service_slots", city="Berlin", start_date="2026-05-16", days=2)["total"] == 0
    assert ok(hub, "find_vehicle_service_slots", city="Berlin", start_date="2026-05-11", days=1)["total"] == 0
    fails(hub, "find_vehicle_service_slots", "no service center in 'Rome'", "Berlin, Paris", city="Rome",
          start_date="2026-05-12")
    fails(hub, "find_vehicle_service_slots", "start_date must be a date", city="Berlin", start_date="tomorrow")
    fails(hub, "find_vehicle_service_slots", "days", city="Berlin", start_date="2026-05-12", days=30)


def test_wake_lock_unlock(hub: Hub) -> None:
    fails(hub, "lock_vehicle", "is asleep", "wake_vehicle", vehicle_id="VEH-0002", user_id=ADA)
    woke = ok(hub, "wake_vehicle", vehicle_id="VEH-0002", user_id=ADA)
    assert (woke["connectivity"], woke["last_seen"]) == ("online", "2026-05-12T07:46")
    fails(hub, "wake_vehicle", "already online", vehicle_id="VEH-0002", user_id=ADA)
    fails(hub, "wake_vehicle", "offline since 2026-05-09T18:00", vehicle_id="VEH-0005", user_id=ADA)
    fails(hub, "lock_vehicle", "offline", vehicle_id="VEH-0005", user_id=ADA)
    assert ok(hub, "lock_vehicle", vehicle_id="VEH-0002", user_id=ADA)["locked"]
    assert ok(hub, "list_vehicle_alerts", vehicle_id="VEH-0002", user_id=ADA)["total"] == 0
    fails(hub, "lock_vehicle", "already locked", vehicle_id="VEH-0002", user_id=ADA)
    fails(hub, "unlock_vehicle", "guest access to 'VEH-0001'", "driver or owner", vehicle_id="VEH-0001", user_id=CY)
    fails(hub, "unlock_vehicle", "2026.5.1 is installing", "until 2026-05-12T08:30", vehicle_id="VEH-0004", user_id=ADA)
    assert not ok(hub, "unlock_vehicle", vehicle_id="VEH-0001", user_id=BO)["locked"]
    assert not ok(hub, "list_my_vehicles", user_id=ADA)["vehicles"][0]["locked"]
    fails(hub, "unlock_vehicle", "already unlocked", vehicle_id="VEH-0001", user_id=BO)
    assert ok(hub, "lock_vehicle", vehicle_id="VEH-0001", user_id=CY)["locked"]  # guests may lock


def test_climate(hub: Hub) -> None:
    st = ok(hub, "set_vehicle_climate", vehicle_id="VEH-0001", user_id=CY, on=True, target_temp_c=22.2)
    assert (st["climate_on"], st["cabin_target_c"]) == (True, 22.0)
    fails(hub, "set_vehicle_climate", "already on at 22.0", vehicle_id="VEH-0001", user_id=CY, on=True)
    assert ok(hub, "set_vehicle_climate", vehicle_id="VEH-0001", user_id=CY, on=True, target_temp_c=19)[
        "cabin_target_c"] == 19.0
    assert not ok(hub, "set_vehicle_climate", vehicle_id="VEH-0001", user_id=ADA, on=False)["climate_on"]
    fails(hub, "set_vehicle_climate", "already off", vehicle_id="VEH-0001", user_id=ADA, on=False)
    fails(hub, "set_vehicle_climate", "only when turning climate on", vehicle_id="VEH-0001", user_id=ADA, on=False,
          target_temp_c=20)
    fails(hub, "set_vehicle_climate", "battery of 'VEH-0003' is at 8%", "at least 10%", vehicle_id="VEH-0003",
          user_id=CY, on=True)
    fails(hub, "set_vehicle_climate", "target_temp_c", "less than or equal to 28", vehicle_id="VEH-0001",
          user_id=ADA, on=True, target_temp_c=30)
    fails(hub, "set_vehicle_climate", "installing", vehicle_id="VEH-0004", user_id=ADA, on=True)
    fails(hub, "set_vehicle_climate", "asleep", vehicle_id="VEH-0002", user_id=ADA, on=True)


def test_charging(hub: Hub) -> None:
    session = ok(hub, "start_vehicle_charging", vehicle_id="VEH-0001", user_id=BO)
    assert (session["session_id"], session["status"], session["start_pct"]) == ("CHG-0003", "active", 60)
    st = ok(hub, "get_vehicle_status", vehicle_id="VEH-0001", user_id=ADA)
    assert st["charging"] and st["active_charging_session_id"] == "CHG-0003"
    fails(hub, "start_vehicle_charging", "already charging", "CHG-0003", vehicle_id="VEH-0001", user_id=BO)
    fails(hub, "start_vehicle_charging", "guest access", vehicle_id="VEH-0003", user_id=BO)
    fails(hub, "start_vehicle_charging", "not electric", vehicle_id="VEH-0002", user_id=ADA)
    fails(hub, "start_vehicle_charging", "not plugged in", vehicle_id="VEH-0004", user_id=ADA)
    done = ok(hub, "stop_vehicle_charging", vehicle_id="VEH-0003", user_id=CY)
    assert (done["session_id"], done["status"], done["end_pct"], done["energy_kwh"], done["cost_eur"]) == (
        "CHG-0002", "completed", 8, 1.8, 1.17)
    fails(hub, "stop_vehicle_charging", "not charging", vehicle_id="VEH-0003", user_id=CY)
    assert ok(hub, "list_vehicle_charging_sessions", vehicle_id="VEH-0001", user_id=BO)["sessions"][0][
        "session_id"] == "CHG-0003"


def test_charge_limit(hub: Hub) -> None:
    res = ok(hub, "set_charge_limit", vehicle_id="VEH-0001", user_id=ADA, charge_limit_pct=90)
    assert (res["charge_limit_pct"], res["stopped_session_id"]) == (90, None)
    fails(hub, "set_charge_limit", "already 90%", vehicle_id="VEH-0001", user_id=ADA, charge_limit_pct=90)
    fails(hub, "set_charge_limit", "charge_limit_pct", "greater than or equal to 50", vehicle_id="VEH-0001",
          user_id=ADA, charge_limit_pct=45)
    fails(hub, "set_charge_limit", "less than or equal to 100", vehicle_id="VEH-0001", user_id=ADA,
          charge_limit_pct=101)
    fails(hub, "set_charge_limit", "not electric", vehicle_id="VEH-0002", user_id=ADA, charge_limit_pct=80)
    fails(hub, "set_charge_limit", "guest access", vehicle_id="VEH-0001", user_id=CY, charge_limit_pct=80)
    ok(hub, "start_vehicle_charging", vehicle_id="VEH-0001", user_id=ADA)
    res = ok(hub, "set_charge_limit", vehicle_id="VEH-0001", user_id=ADA, charge_limit_pct=60)
    assert (res["charging"], res["stopped_session_id"]) == (False, "CHG-0003")
    fails(hub, "start_vehicle_charging", "already at its charge limit of 60%", "set_charge_limit",
          vehicle_id="VEH-0001", user_id=ADA)


def test_book_service(hub: Hub) -> None:
    base = {"vehicle_id": "VEH-0004", "user_id": ADA, "center_id": "CTR-0001", "service_type": "tire_service"}
    fails(hub, "book_vehicle_service", "2026-05-13T08:00", "already taken", "free slots that day: 10:00",
          start="2026-05-13T08:00", **base)
    fails(hub, "book_vehicle_service", "not one of its slots", start="2026-05-13T09:00", **base)
    fails(hub, "book_vehicle_service", "Monday-Friday", start="2026-05-16T08:00", **base)
    fails(hub, "book_vehicle_service", "not in the future", start="2026-05-11T08:00", **base)
    fails(hub, "book_vehicle_service", "more than 60 days ahead", start="2026-08-03T08:00", **base)
    fails(hub, "book_vehicle_service", "start must be a date and time YYYY-MM-DDTHH:MM", start="next Monday", **base)
    fails(hub, "book_vehicle_service", "does not offer battery_check", "annual_inspection",
          **{**base, "service_type": "battery_check"}, start="2026-05-13T10:00")
    fails(hub, "book_vehicle_service", "needs no oil change", **{**base, "service_type": "oil_change"},
          start="2026-05-13T10:00")
    fails(hub, "book_vehicle_service", "service center 'CTR-0099' not found", **{**base, "center_id": "CTR-0099"},
          start="2026-05-13T10:00")
    fails(hub, "book_vehicle_service", "guest access", **{**base, "vehicle_id": "VEH-0001", "user_id": CY},
          start="2026-05-13T10:00")
    appt = ok(hub, "book_vehicle_service", start="2026-05-13T10:00", notes=" winter tires off ", **base)
    assert (appt["appointment_id"], appt["status"], appt["notes"]) == ("SVC-0003", "booked", "winter tires off")
    slots = ok(hub, "find_vehicle_service_slots", city="Berlin", start_date="2026-05-13", days=1)["slots"]
    assert [s["start"] for s in slots] == ["2026-05-13T13:00"]
    assert ok(hub, "get_vehicle_status", vehicle_id="VEH-0004", user_id=ADA)["upcoming_appointment"][
        "appointment_id"] == "SVC-0003"
    fails(hub, "book_vehicle_service", "already has appointment 'SVC-0003'", start="2026-05-14T10:00", **base)


def test_book_service_accepts_seconds_of_the_shared_format(hub: Hub) -> None:
    base = {"vehicle_id": "VEH-0004", "user_id": ADA, "center_id": "CTR-0001", "service_type": "tire_service"}
    fails(hub, "book_vehicle_service", "not one of its slots", start="2026-05-13T10:00:30", **base)
    assert ok(hub, "book_vehicle_service", start="2026-05-13T10:00:00", **base)["start"] == "2026-05-13T10:00"


def test_vehicles_and_alerts_page(hub: Hub) -> None:
    first = ok(hub, "list_my_vehicles", user_id=ADA, limit=3)
    assert first["total"] == 4 and first["next_offset"] == 3
    second = ok(hub, "list_my_vehicles", user_id=ADA, offset=first["next_offset"], limit=3)
    assert second["total"] == 4 and second["next_offset"] is None
    assert [v["vehicle_id"] for v in first["vehicles"] + second["vehicles"]] == [
        "VEH-0001", "VEH-0002", "VEH-0004", "VEH-0005"]
    alerts = ok(hub, "list_vehicle_alerts", vehicle_id="VEH-0001", user_id=ADA, include_resolved=True, limit=1)
    assert alerts["total"] == 2 and alerts["next_offset"] == 1
    rest = ok(hub, "list_vehicle_alerts", vehicle_id="VEH-0001", user_id=ADA, include_resolved=True, offset=1)
    assert rest["next_offset"] is None and rest["alerts"][0]["alert_id"] != alerts["alerts"][0]["alert_id"]


def test_valet_mode(hub: Hub) -> None:
    args = {"vehicle_id": "VEH-0003", "user_id": CY}
    fails(hub, "set_valet_mode", "already on", enabled=True, valet_pin="4321", **args)
    fails(hub, "set_valet_mode", "PIN is wrong", enabled=False, valet_pin="0000", **args)
    st = ok(hub, "set_valet_mode", enabled=False, valet_pin="1234", **args)
    assert not st["valet_mode"] and "valet_pin" not in st
    fails(hub, "set_valet_mode", "not on", enabled=False, valet_pin="1234", **args)
    assert ok(hub, "set_valet_mode", enabled=True, valet_pin="5678", **args)["valet_mode"]
    fails(hub, "set_valet_mode", "PIN is wrong", enabled=False, valet_pin="1234", **args)
    fails(hub, "set_valet_mode", "exactly 4 digits", enabled=True, valet_pin="12a4", vehicle_id="VEH-0001", user_id=ADA)
    fails(hub, "set_valet_mode", "guest access", enabled=True, valet_pin="1111", vehicle_id="VEH-0003", user_id=BO)
    fails(hub, "set_valet_mode", "installing", enabled=True, valet_pin="1111", vehicle_id="VEH-0004", user_id=ADA)


def test_share_access(hub: Hub) -> None:
    shared = ok(hub, "share_vehicle_access", vehicle_id="VEH-0002", user_id=ADA, recipient_email="Bo@x.com",
                permission="driver")
    assert [(a["user_id"], a["permission"]) for a in shared["access"]] == [(ADA, "owner"), (BO, "driver")]
    assert [v["vehicle_id"] for v in ok(hub, "list_my_vehicles", user_id=BO)["vehicles"]] == [
        "VEH-0001", "VEH-0002", "VEH-0003"]
    fails(hub, "share_vehicle_access", "Bo Silva (USR-0002) already has driver access", vehicle_id="VEH-0002",
          user_id=ADA, recipient_email="bo@x.com", permission="guest")
    fails(hub, "share_vehicle_access", "already has owner access", vehicle_id="VEH-0001", user_id=ADA,
          recipient_email="ada@x.com", permission="guest")
    fails(hub, "share_vehicle_access", "can share guest access only", vehicle_id="VEH-0001", user_id=BO,
          recipient_email="dee@x.com", permission="driver")
    fails(hub, "share_vehicle_access", "guest access", vehicle_id="VEH-0001", user_id=CY,
          recipient_email="dee@x.com", permission="guest")
    fails(hub, "share_vehicle_access", "no app user with email 'zed@x.com'", vehicle_id="VEH-0001", user_id=ADA,
          recipient_email="zed@x.com", permission="guest")
    fails(hub, "share_vehicle_access", "permission", vehicle_id="VEH-0001", user_id=ADA,
          recipient_email="dee@x.com", permission="owner")
    ok(hub, "share_vehicle_access", vehicle_id="VEH-0001", user_id=BO, recipient_email="dee@x.com", permission="guest")
    assert ok(hub, "get_vehicle_status", vehicle_id="VEH-0001", user_id=DEE)["your_permission"] == "guest"
