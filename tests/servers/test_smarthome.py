"""Smart-home server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub, Registry
from prove.env.state import state_hash
from prove_servers.smarthome import SERVER
from prove_servers.smarthome.state import (
    Automation,
    Device,
    EnergyLog,
    Home,
    Room,
    Scene,
    SceneAction,
    SmartHomeState,
    initial_state,
)

LATEST = {"Lumina A19": "2.4.1", "Lumina Basic": "1.1.0", "SecureBolt S2": "3.4.1",
          "SenseIt Motion": "1.0.1", "ClimaSense T5": "5.2.2", "PowerPlug Energy": "1.9.2",
          "EyeCam Indoor": "7.2.0"}


def _dev(did: str, home: str, room: str, name: str, kind: str, model: str, **kw) -> Device:
    kw.setdefault("firmware", LATEST[model])
    kw.setdefault("online", True)
    return Device(device_id=did, home_id=home, room_id=room, name=name, device_type=kind,
                  model=model, **kw)


def tiny() -> SmartHomeState:
    s = SmartHomeState(now="2026-03-16T18:30", latest_firmware=dict(LATEST))
    s.homes["HOM-0001"] = Home(home_id="HOM-0001", name="Chen Residence", owner="Ada Chen",
                               owner_email="ada.chen@home.example.com", address="1 Oak Street, Berlin",
                               city="Berlin", timezone="Europe/Berlin", mode="home",
                               mode_changed_at="2026-03-10T08:00")
    s.homes["HOM-0002"] = Home(home_id="HOM-0002", name="Silva Loft", owner="Bo Silva",
                               owner_email="bo.silva@home.example.com", address="9 Mill Lane, Lisbon",
                               city="Lisbon", timezone="Europe/Lisbon", mode="away",
                               mode_changed_at="2026-03-12T08:00")
    for rid, hid, name in (("RM-0001", "HOM-0001", "Hallway"), ("RM-0002", "HOM-0001", "Living Room"),
                           ("RM-0003", "HOM-0002", "Living Room")):
        s.rooms[rid] = Room(room_id=rid, home_id=hid, name=name, floor=0)
    h1, h2 = "HOM-0001", "HOM-0002"
    for dev in (
        _dev("DEV-0001", h1, "RM-0001", "Hallway Front Door Lock", "lock", "SecureBolt S2",
             locked=False, battery=80),
        _dev("DEV-0002", h1, "RM-0001", "Hallway Motion Sensor", "sensor", "SenseIt Motion",
             sensor_kind="motion", battery=90, firmware="0.9.8"),
        _dev("DEV-0003", h1, "RM-0002", "Living Room Floor Lamp", "light", "Lumina A19",
             on=False, brightness=60, color_temp=2700, firmware="2.2.3"),
        _dev("DEV-0004", h1, "RM-0002", "Living Room Ceiling Light", "light", "Lumina Basic",
             on=True, brightness=100, online=False, offline_since="2026-03-14T22:10"),
        _dev("DEV-0005", h1, "RM-0002", "Living Room Thermostat", "thermostat", "ClimaSense T5",
             target_temp=20.0, hvac_mode="heat", current_temp=19.5),
        _dev("DEV-0006", h1, "RM-0002", "Living Room TV Plug", "plug", "PowerPlug Energy",
             on=True, power_watts=120.0),
        _dev("DEV-0007", h1, "RM-0001", "Hallway Camera", "camera", "EyeCam Indoor", recording=False),
        _dev("DEV-0008", h1, "RM-0001", "Hallway Back Door Lock", "lock", "SecureBolt S2",
             locked=True, battery=5, firmware="3.3.0"),
        _dev("DEV-0009", h2, "RM-0003", "Living Room Lamp", "light", "Lumina Basic", on=False,
             brightness=50),
        _dev("DEV-0010", h2, "RM-0003", "Front Door Lock", "lock", "SecureBolt S2", locked=True,
             battery=50),
    ):
        s.devices[dev.device_id] = dev
    s.lock_codes = {"DEV-0001": ["1234", "987654"], "DEV-0008": ["5555"], "DEV-0010": ["4321"]}
    scenes = (
        ("SCN-0001", h1, "Movie Night", [
            SceneAction(device_id="DEV-0003", on=True, brightness=20, color_temp=2200),
            SceneAction(device_id="DEV-0006", on=False)]),
        ("SCN-0002", h1, "Good Night", [SceneAction(device_id="DEV-0004", on=False)]),
        ("SCN-0003", h1, "Lock Up", [SceneAction(device_id="DEV-0001", locked=True),
                                     SceneAction(device_id="DEV-0008", locked=True)]),
        ("SCN-0004", h2, "Evening", [SceneAction(device_id="DEV-0009", on=True)]),
    )
    for sid, hid, name, actions in scenes:
        s.scenes[sid] = Scene(scene_id=sid, home_id=hid, name=name, actions=actions,
                              created_at="2026-01-05T10:00")
    s.automations["AUT-0001"] = Automation(
        automation_id="AUT-0001", home_id=h1, name="Hallway motion", trigger="motion",
        trigger_device_id="DEV-0002", only_in_modes=["night"], scene_id="SCN-0001", enabled=True,
        created_at="2026-02-01T09:00")
    s.automations["AUT-0002"] = Automation(
        automation_id="AUT-0002", home_id=h1, name="Morning", trigger="time", at_time="07:00",
        scene_id="SCN-0001", enabled=False, created_at="2026-02-01T09:00")
    for did, days in (("DEV-0003", {"2026-03-13": 0.2, "2026-03-14": 0.3, "2026-03-15": 0.5}),
                      ("DEV-0006", {"2026-03-09": 1.0, "2026-03-14": 2.0, "2026-03-15": 1.5}),
                      ("DEV-0005", {"2026-03-15": 5.0})):
        s.energy[did] = EnergyLog(device_id=did, home_id=h1, daily_kwh=days)
    return s


hub = hub_fixture(SERVER, tiny)


def ids(items: list[dict], key: str = "device_id") -> list[str]:
    return [item[key] for item in items]


def test_homes_and_rooms(hub: Hub) -> None:
    assert ids(ok(hub, "list_homes", query="chen")["homes"], "home_id") == ["HOM-0001"]
    assert ids(ok(hub, "list_homes", city="lisbon")["homes"], "home_id") == ["HOM-0002"]
    assert ok(hub, "list_homes", mode="away")["total"] == 1
    assert ok(hub, "list_homes")["total"] == 2
    fails(hub, "list_homes", "mode", "'home', 'away', 'vacation' or 'night'", mode="party")
    rooms = ok(hub, "list_home_rooms", home_id="HOM-0001")["rooms"]
    assert [(r["name"], r["device_count"], r["offline_count"]) for r in rooms] == [
        ("Hallway", 4, 0), ("Living Room", 4, 1)]
    fails(hub, "list_home_rooms", "home 'HOM-9' not found", "HOM-0001", home_id="HOM-9")


def test_list_and_get_devices(hub: Hub) -> None:
    assert ok(hub, "list_devices", home_id="HOM-0001")["total"] == 8
    assert ids(ok(hub, "list_devices", device_type="light", home_id="HOM-0001")["devices"]) == [
        "DEV-0003", "DEV-0004"]
    assert ids(ok(hub, "list_devices", online=False)["devices"]) == ["DEV-0004"]
    assert ids(ok(hub, "list_devices", room_id="RM-0001", device_type="lock")["devices"]) == [
        "DEV-0001", "DEV-0008"]
    assert ids(ok(hub, "list_devices", update_available=True)["devices"]) == [
        "DEV-0002", "DEV-0003", "DEV-0008"]
    page = ok(hub, "list_devices", limit=3)
    assert page["next_offset"] == 3 and len(page["devices"]) == 3 and page["total"] == 10
    assert ok(hub, "list_devices", offset=9)["next_offset"] is None
    fails(hub, "list_devices", "room 'RM-0003' belongs to home 'HOM-0002'", "RM-0001",
          home_id="HOM-0001", room_id="RM-0003")
    fails(hub, "list_devices", "device_type", "'light'", device_type="fridge")
    fails(hub, "list_devices", "limit", "less than or equal to 50", limit=500)
    dev = ok(hub, "get_device_state", device_id="DEV-0003")
    assert dev["room_name"] == "Living Room" and dev["update_available"]
    assert dev["latest_firmware"] == "2.4.1" and dev["color_temp"] == 2700
    fails(hub, "get_device_state", "device 'DEV-0099' not found", "DEV-0001", device_id="DEV-0099")


def test_home_status(hub: Hub) -> None:
    st = ok(hub, "get_home_status", home_id="HOM-0001")
    assert ids(st["offline_devices"]) == ["DEV-0004"]
    assert ids(st["unlocked_doors"]) == ["DEV-0001"]
    assert ids(st["low_battery_devices"]) == ["DEV-0008"]
    assert ids(st["lights_on"]) == ["DEV-0004"]  # last known state of an offline light
    assert st["plug_load_watts"] == 120.0 and st["indoor_temp_c"] == 19.5
    assert st["enabled_automations"] == 1 and st["mode"] == "home"
    fails(hub, "get_home_status", "home 'HOM-3' not found", home_id="HOM-3")


def test_energy_usage(hub: Hub) -> None:
    rep = ok(hub, "get_energy_usage", home_id="HOM-0001")
    assert (rep["start_date"], rep["end_date"]) == ("2026-03-09", "2026-03-15")
    assert rep["total_kwh"] == 10.5 and rep["days_with_data"] == 4
    assert ids(rep["devices"]) == ["DEV-0005", "DEV-0006", "DEV-0003"]
    assert rep["daily"][-1] == {"date": "2026-03-15", "kwh": 7.0}
    assert ok(hub, "get_energy_usage", home_id="HOM-0001", start_date="2026-03-14")["total_kwh"] == 9.3
    assert ok(hub, "get_energy_usage", home_id="HOM-0001", device_id="DEV-0006")["total_kwh"] == 4.5
    one_day = ok(hub, "get_energy_usage", home_id="HOM-0001", room_id="RM-0002",
                 start_date="2026-03-13", end_date="2026-03-13")
    assert one_day["total_kwh"] == 0.2 and one_day["days_with_data"] == 1
    assert ok(hub, "get_energy_usage", home_id="HOM-0002")["total_kwh"] == 0.0
    fails(hub, "get_energy_usage", "start_date must be a date", home_id="HOM-0001", start_date="last week")
    fails(hub, "get_energy_usage", "is after end_date", home_id="HOM-0001",
          start_date="2026-03-15", end_date="2026-03-10")
    fails(hub, "get_energy_usage", "'DEV-0001' is not a metered device", "DEV-0003",
          home_id="HOM-0001", device_id="DEV-0001")
    fails(hub, "get_energy_usage", "room 'RM-0003' is not in home 'HOM-0001'", home_id="HOM-0001",
          room_id="RM-0003")


def test_set_light(hub: Hub) -> None:
    dev = ok(hub, "set_light", device_id="DEV-0003", on=True, brightness=70, color_temp=4000)
    assert (dev["on"], dev["brightness"], dev["color_temp"]) == (True, 70, 4000)
    assert ok(hub, "get_device_state", device_id="DEV-0003")["brightness"] == 70
    assert ids(ok(hub, "get_home_status", home_id="HOM-0001")["lights_on"]) == ["DEV-0003", "DEV-0004"]
    assert ok(hub, "set_light", device_id="DEV-0003", on=False)["on"] is False
    fails(hub, "set_light", "'DEV-0005' (Living Room Thermostat) is a thermostat, not a light",
          "DEV-0003, DEV-0004", device_id="DEV-0005", on=True)
    fails(hub, "set_light", "offline since 2026-03-14T22:10", device_id="DEV-0004", on=False)
    fails(hub, "set_light", "no tunable colour temperature", device_id="DEV-0009", on=True, color_temp=3000)
    fails(hub, "set_light", "only be set when switching the light on", device_id="DEV-0003", on=False,
          brightness=10)
    fails(hub, "set_light", "brightness", "greater than or equal to 1", device_id="DEV-0003", on=True,
          brightness=0)
    fails(hub, "set_light", "missing required argument 'on'", device_id="DEV-0003")


def test_set_thermostat(hub: Hub) -> None:
    dev = ok(hub, "set_thermostat", device_id="DEV-0005", target_temp=22.5, mode="cool")
    assert (dev["target_temp"], dev["hvac_mode"]) == (22.5, "cool")
    assert ok(hub, "get_device_state", device_id="DEV-0005")["target_temp"] == 22.5
    assert ok(hub, "set_thermostat", device_id="DEV-0005", mode="off")["target_temp"] == 22.5
    fails(hub, "set_thermostat", "target_temp", "less than or equal to 30", device_id="DEV-0005",
          target_temp=35)
    fails(hub, "set_thermostat", "target_temp", "greater than or equal to 10", device_id="DEV-0005",
          target_temp=4)
    fails(hub, "set_thermostat", "give target_temp, mode or both", device_id="DEV-0005")
    fails(hub, "set_thermostat", "is a light, not a thermostat", "DEV-0005", device_id="DEV-0003",
          target_temp=21)
    fails(hub, "set_thermostat", "mode", "'heat', 'cool', 'auto' or 'off'", device_id="DEV-0005",
          mode="dry")


def test_locks(hub: Hub) -> None:
    assert ok(hub, "lock_door", device_id="DEV-0001")["locked"] is True
    fails(hub, "lock_door", "already locked", device_id="DEV-0001")
    fails(hub, "unlock_door", "wrong access code for lock 'DEV-0001'", device_id="DEV-0001", code="0000")
    fails(hub, "unlock_door", "code", "should match pattern", device_id="DEV-0001", code="12")
    fails(hub, "unlock_door", "code", "should match pattern", device_id="DEV-0001", code="1234567")
    fails(hub, "unlock_door", "wrong access code", device_id="DEV-0001", code="4321")  # another lock's
    assert ok(hub, "unlock_door", device_id="DEV-0001", code="987654")["locked"] is False
    assert ids(ok(hub, "get_home_status", home_id="HOM-0001")["unlocked_doors"]) == ["DEV-0001"]
    fails(hub, "unlock_door", "already unlocked", device_id="DEV-0001", code="1234")
    fails(hub, "unlock_door", "battery is at 5%", "below 10%", device_id="DEV-0008", code="5555")
    fails(hub, "lock_door", "is a camera, not a lock", "DEV-0001, DEV-0008", device_id="DEV-0007")
    fails(hub, "unlock_door", "is a sensor, not a lock", device_id="DEV-0002", code="1234")


def test_rooms_and_scenes_page(hub: Hub) -> None:
    first = ok(hub, "list_scenes", home_id="HOM-0001", limit=2)
    assert first["total"] == 3 and first["next_offset"] == 2
    second = ok(hub, "list_scenes", home_id="HOM-0001", offset=first["next_offset"], limit=2)
    assert second["total"] == 3 and second["next_offset"] is None
    assert ids(first["scenes"] + second["scenes"], "scene_id") == ["SCN-0001", "SCN-0002", "SCN-0003"]
    rooms = ok(hub, "list_home_rooms", home_id="HOM-0001", limit=1)
    assert rooms["total"] == 2 and rooms["next_offset"] == 1
    assert ok(hub, "list_home_rooms", home_id="HOM-0001", offset=1, limit=1)["next_offset"] is None


def test_create_and_activate_scene(hub: Hub) -> None:
    assert ids(ok(hub, "list_scenes", home_id="HOM-0001")["scenes"], "scene_id") == [
        "SCN-0001", "SCN-0002", "SCN-0003"]
    actions = [{"device_id": "DEV-0003", "on": True, "brightness": 90},
               {"device_id": "DEV-0005", "target_temp": 21.0, "hvac_mode": "auto"},
               {"device_id": "DEV-0001", "locked": True}]
    scene = ok(hub, "create_scene", home_id="HOM-0001", name="Reading", actions=actions)
    assert scene["scene_id"] == "SCN-0005" and scene["last_activated"] is None
    assert ok(hub, "list_scenes", home_id="HOM-0001")["total"] == 4
    run = ok(hub, "activate_scene", scene_id="SCN-0005")
    assert ids(run["devices"]) == ["DEV-0003", "DEV-0005", "DEV-0001"]
    thermo = ok(hub, "get_device_state", device_id="DEV-0005")
    assert (thermo["target_temp"], thermo["hvac_mode"]) == (21.0, "auto")
    status = ok(hub, "get_home_status", home_id="HOM-0001")
    assert ids(status["lights_on"]) == ["DEV-0003", "DEV-0004"] and status["unlocked_doors"] == []
    listed = ok(hub, "list_scenes", home_id="HOM-0001")["scenes"][-1]
    assert listed["last_activated"] == run["activated_at"]


def test_activate_existing_scene(hub: Hub) -> None:
    ok(hub, "activate_scene", scene_id="SCN-0001")
    lamp = ok(hub, "get_device_state", device_id="DEV-0003")
    assert (lamp["on"], lamp["brightness"], lamp["color_temp"]) == (True, 20, 2200)
    assert ok(hub, "get_home_status", home_id="HOM-0001")["plug_load_watts"] == 0.0
    fails(hub, "activate_scene", "offline devices: DEV-0004", "since 2026-03-14T22:10", scene_id="SCN-0002")
    fails(hub, "activate_scene", "'DEV-0008'", "battery is at 5%", scene_id="SCN-0003")
    assert ok(hub, "get_device_state", device_id="DEV-0001")["locked"] is False  # nothing applied
    fails(hub, "activate_scene", "scene 'SCN-0042' not found", "SCN-0001", scene_id="SCN-0042")


@pytest.mark.parametrize(
    ("name", "actions", "fragments"),
    [
        ("movie night", [{"device_id": "DEV-0003", "on": True}], ("already has a scene named", "SCN-0001")),
        ("X", [{"device_id": "DEV-0099", "on": True}], ("actions[0].device_id", "'DEV-0099' not found in home 'HOM-0001'", "DEV-0001")),
        ("X", [{"device_id": "DEV-0003", "on": True}, {"device_id": "DEV-0009", "on": True}],
         ("actions[1].device_id", "'DEV-0009' not found in home 'HOM-0001'")),
        ("X", [{"device_id": "DEV-0006", "brightness": 50}], ("is a plug and has no brightness", "accepts on")),
        ("X", [{"device_id": "DEV-0001", "locked": False}], ("scenes cannot unlock doors", "unlock_door")),
        ("X", [{"device_id": "DEV-0002", "on": True}], ("sensors are read-only",)),
        ("X", [{"device_id": "DEV-0005"}], ("actions[0] sets nothing", "target_temp, hvac_mode")),
        ("X", [{"device_id": "DEV-0004", "color_temp": 3000}], ("no tunable colour temperature",)),
        ("X", [{"device_id": "DEV-0003", "on": True}, {"device_id": "DEV-0003", "on": False}], ("repeated: DEV-0003",)),
        ("X", [{"device_id": "DEV-0005", "target_temp": 40}], ("actions.0.target_temp", "less than or equal to 30")),
        ("X", [{"device_id": "DEV-0003", "dim": 5}], ("actions.0.dim", "Extra inputs are not permitted")),
        ("X", [], ("actions", "at least 1 item")),
    ],
)
def test_create_scene_failures(hub: Hub, name: str, actions: list, fragments: tuple[str, ...]) -> None:
    fails(hub, "create_scene", *fragments, home_id="HOM-0001", name=name, actions=actions)


def test_automations(hub: Hub) -> None:
    assert ok(hub, "list_automations", home_id="HOM-0001")["total"] == 2
    assert ids(ok(hub, "list_automations", home_id="HOM-0001", enabled=True)["automations"],
               "automation_id") == ["AUT-0001"]
    assert ok(hub, "list_automations", home_id="HOM-0001", trigger="time")["automations"][0]["at_time"] == "07:00"
    auto = ok(hub, "create_automation", home_id="HOM-0001", name="Bedtime", trigger="time",
              at_time="22:30", scene_id="SCN-0003", only_in_mode="night")
    assert auto["automation_id"] == "AUT-0003" and auto["only_in_modes"] == ["night"] and auto["enabled"]
    door = ok(hub, "create_automation", home_id="HOM-0001", name="Door opened", trigger="door_open",
              trigger_device_id="DEV-0001", scene_id="SCN-0001", enabled=False)
    assert door["enabled"] is False and door["only_in_modes"] == []
    ok(hub, "create_automation", home_id="HOM-0001", name="Too warm", trigger="temperature",
       trigger_device_id="DEV-0005", threshold_c=26.0, scene_id="SCN-0001")
    listed = ok(hub, "list_automations", home_id="HOM-0001")
    assert listed["total"] == 5 and listed["automations"][-1]["threshold_c"] == 26.0
    assert ok(hub, "get_home_status", home_id="HOM-0001")["enabled_automations"] == 3


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"name": "hallway MOTION", "trigger": "motion", "trigger_device_id": "DEV-0002"},
         ("already has an automation named", "AUT-0001")),
        ({"trigger": "time", "at_time": "07:00", "scene_id": "SCN-0004"},
         ("scene 'SCN-0004' belongs to home 'HOM-0002'", "SCN-0001")),
        ({"trigger": "time", "scene_id": "SCN-0404", "at_time": "07:00"}, ("scene 'SCN-0404' not found",)),
        ({"trigger": "time"}, ("needs at_time",)),
        ({"trigger": "time", "at_time": "07:00", "trigger_device_id": "DEV-0002"}, ("takes only at_time",)),
        ({"trigger": "time", "at_time": "7pm"}, ("at_time", "should match pattern")),
        ({"trigger": "motion"}, ("needs trigger_device_id", "motion sensors")),
        ({"trigger": "motion", "trigger_device_id": "DEV-0001"}, ("is a lock of home 'HOM-0001'", "DEV-0002")),
        ({"trigger": "door_open", "trigger_device_id": "DEV-0010"}, ("of home 'HOM-0002'", "DEV-0001, DEV-0008")),
        ({"trigger": "door_open", "trigger_device_id": "DEV-0077"}, ("device 'DEV-0077' not found", "trigger_device_id")),
        ({"trigger": "door_open", "trigger_device_id": "DEV-0001", "at_time": "07:00"}, ("at_time only applies",)),
        ({"trigger": "temperature", "trigger_device_id": "DEV-0005"}, ("threshold_c is required",)),
        ({"trigger": "motion", "trigger_device_id": "DEV-0002", "threshold_c": 20}, ("threshold_c is required",)),
        ({"trigger": "sunrise"}, ("trigger", "'time', 'motion', 'door_open' or 'temperature'")),
        ({"trigger": "time", "at_time": "07:00", "only_in_mode": "party"}, ("only_in_mode", "'vacation'")),
    ],
)
def test_create_automation_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "create_automation", *fragments,
          **{"home_id": "HOM-0001", "name": "New rule", "scene_id": "SCN-0001", **args})


def test_home_mode(hub: Hub) -> None:
    fails(hub, "set_home_mode", "unlocked doors: DEV-0001 (Hallway Front Door Lock)", "lock_door",
          home_id="HOM-0001", mode="away")
    ok(hub, "lock_door", device_id="DEV-0001")
    change = ok(hub, "set_home_mode", home_id="HOM-0001", mode="away")
    assert change["previous_mode"] == "home" and change["cameras_started"] == ["DEV-0007"]
    assert ok(hub, "get_device_state", device_id="DEV-0007")["recording"] is True
    assert ids(ok(hub, "list_homes", mode="away")["homes"], "home_id") == ["HOM-0001", "HOM-0002"]
    fails(hub, "set_home_mode", "already in mode 'away'", home_id="HOM-0001", mode="away")
    assert ok(hub, "set_home_mode", home_id="HOM-0001", mode="night")["cameras_started"] == []
    assert ok(hub, "set_home_mode", home_id="HOM-0001", mode="home")["cameras_stopped"] == ["DEV-0007"]
    assert ok(hub, "get_home_status", home_id="HOM-0001")["recording_cameras"] == []
    fails(hub, "set_home_mode", "mode", "'home', 'away', 'vacation' or 'night'", home_id="HOM-0001", mode="party")


def test_firmware(hub: Hub) -> None:
    up = ok(hub, "update_device_firmware", device_id="DEV-0003")
    assert (up["previous_firmware"], up["firmware"]) == ("2.2.3", "2.4.1")
    dev = ok(hub, "get_device_state", device_id="DEV-0003")
    assert dev["firmware"] == "2.4.1" and not dev["update_available"] and dev["firmware_updated_at"]
    assert ids(ok(hub, "list_devices", update_available=True)["devices"]) == ["DEV-0002", "DEV-0008"]
    fails(hub, "update_device_firmware", "already runs the latest firmware 2.4.1", device_id="DEV-0003")
    fails(hub, "update_device_firmware", "offline since 2026-03-14T22:10", device_id="DEV-0004")
    fails(hub, "update_device_firmware", "battery is at 5%", "at least 20%", device_id="DEV-0008")


def test_seeded_world_is_deterministic_and_linked() -> None:
    a, b = initial_state(11), initial_state(11)
    assert state_hash(a) == state_hash(b) and state_hash(a) != state_hash(initial_state(12))
    assert len(a.homes) >= 6 and len(a.devices) >= 60 and not a.counters
    assert a.model_copy(deep=True).new_id("SCN") == f"SCN-{len(a.scenes) + 1:04d}"
    for scene in a.scenes.values():
        assert all(a.devices[x.device_id].home_id == scene.home_id for x in scene.actions)
    for auto in a.automations.values():
        assert a.scenes[auto.scene_id].home_id == auto.home_id
    assert all(4 <= len(c) <= 6 and c.isdigit() for codes in a.lock_codes.values() for c in codes)
    assert {d.device_type for d in a.devices.values()} == {
        "light", "thermostat", "lock", "camera", "plug", "speaker", "sensor", "blind"}
    hub = Hub(Registry([SERVER]))
    hub.open("t", seed=11)
    home = ok(hub, "list_homes")["homes"][0]["home_id"]
    light = ok(hub, "list_devices", home_id=home, device_type="light", online=True)["devices"][0]
    scene = ok(hub, "create_scene", home_id=home, name="Test scene",
               actions=[{"device_id": light["device_id"], "on": True}])
    assert scene["scene_id"] == f"SCN-{len(a.scenes) + 1:04d}"

