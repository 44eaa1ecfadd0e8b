"""Smart-home server state: homes, rooms, devices, scenes, automations, daily energy readings."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, naming
from prove.env.world import LAST_NAMES, STREETS, days_before, email, person

HomeMode = Literal["home", "away", "vacation", "night"]
DeviceType = Literal["light", "thermostat", "lock", "camera", "plug", "speaker", "sensor", "blind"]
ThermostatMode = Literal["heat", "cool", "auto", "off"]
SensorKind = Literal["motion", "contact", "temperature", "leak"]
Trigger = Literal["time", "motion", "door_open", "temperature"]

MIN_TARGET_C, MAX_TARGET_C = 10.0, 30.0
LOCK_MIN_BATTERY = 10
"""A lock below this battery percentage refuses to move its bolt."""
FIRMWARE_MIN_BATTERY = 20
"""A battery-powered device below this percentage refuses firmware updates."""

HomeId = entity_id("home", "Home id, e.g. 'HOM-0002'.", example="HOM-0002")
RoomId = entity_id("room", "Room id, e.g. 'RM-0005'.", example="RM-0005")
DeviceId = entity_id("device", "Device id, e.g. 'DEV-0014'.", example="DEV-0014")
SceneId = entity_id("scene", "Scene id, e.g. 'SCN-0003'.", example="SCN-0003")
AutomationId = entity_id("automation", "Automation id, e.g. 'AUT-0002'.", example="AUT-0002")


class Home(Record):
    home_id: HomeId
    name: str = Field(json_schema_extra=naming("name"))
    owner: str
    owner_email: str
    address: str
    city: str
    timezone: str = Field(description="IANA time zone of the home, e.g. 'Europe/Berlin'.")
    mode: HomeMode
    mode_changed_at: str


class Room(Record):
    room_id: RoomId
    home_id: HomeId
    name: str = Field(json_schema_extra=naming("name"))
    floor: int


class Device(Record):
    device_id: DeviceId
    home_id: HomeId
    room_id: RoomId
    name: str = Field(json_schema_extra=naming("name"))
    device_type: DeviceType
    model: str
    firmware: str
    online: bool
    offline_since: str | None = Field(None, description="When an offline device was last seen.")
    on: bool | None = Field(None, description="Lights, plugs and speakers: switched on.")
    brightness: int | None = Field(None, description="Lights: 1-100 percent.")
    color_temp: int | None = Field(None, description="Tunable lights: colour temperature in kelvin.")
    target_temp: float | None = Field(None, description="Thermostats: set-point in °C.")
    current_temp: float | None = Field(None, description="Thermostats and temperature sensors: °C.")
    hvac_mode: ThermostatMode | None = Field(None, description="Thermostats: heat, cool, auto, off.")
    locked: bool | None = Field(None, description="Locks: bolt thrown.")
    battery: int | None = Field(None, description="Battery-powered devices: percent left.")
    recording: bool | None = Field(None, description="Cameras: recording now.")
    power_watts: float | None = Field(None, description="Plugs: draw of the attached appliance when on.")
    position: int | None = Field(None, description="Blinds: 0 (closed) to 100 (fully open).")
    volume: int | None = Field(None, description="Speakers: 0-100.")
    sensor_kind: SensorKind | None = Field(None, description="Sensors: what they detect.")
    firmware_updated_at: str | None = None


class SceneAction(Record):
    """One device's settings inside a scene; fields left out are not touched."""

    device_id: entity_id("device", "Device to set, e.g. 'DEV-0004' (must be in the scene's home).", example="DEV-0004")
    on: bool | None = Field(None, description="Lights, plugs, speakers: switch on or off.")
    brightness: int | None = Field(None, ge=1, le=100, description="Lights: 1-100 percent.")
    color_temp: int | None = Field(None, ge=2200, le=6500, description="Tunable lights: kelvin.")
    target_temp: float | None = Field(
        None, ge=MIN_TARGET_C, le=MAX_TARGET_C, description="Thermostats: set-point, 10-30 °C."
    )
    hvac_mode: ThermostatMode | None = Field(None, description="Thermostats: heat, cool, auto, off.")
    locked: bool | None = Field(None, description="Locks: only true; scenes cannot unlock doors.")
    recording: bool | None = Field(None, description="Cameras: start or stop recording.")
    position: int | None = Field(None, ge=0, le=100, description="Blinds: 0 closed to 100 open.")
    volume: int | None = Field(None, ge=0, le=100, description="Speakers: 0-100.")


class Scene(Record):
    scene_id: SceneId
    home_id: HomeId
    name: str = Field(json_schema_extra=naming("name"))
    actions: list[SceneAction]
    created_at: str
    last_activated: str | None = None


class Automation(Record):
    automation_id: AutomationId
    home_id: HomeId
    name: str = Field(json_schema_extra=naming("name"))
    trigger: Trigger
    trigger_device_id: DeviceId | None = Field(None, description="Sensor, lock or thermostat watched.")
    at_time: str | None = Field(None, description="Time triggers: local time HH:MM.")
    threshold_c: float | None = Field(None, description="Temperature triggers: fire above this °C.")
    only_in_modes: list[HomeMode] = Field(default_factory=list, description="Empty: any mode.")
    scene_id: entity_id("scene", "Scene the automation activates when it fires.")
    enabled: bool
    created_at: str
    last_triggered: str | None = None


class EnergyLog(Record):
    device_id: DeviceId
    home_id: HomeId
    daily_kwh: dict[str, float] = Field(description="kWh used per day, keyed by YYYY-MM-DD.")


class SmartHomeState(ServerState):
    homes: dict[str, Home] = Field(default_factory=dict)
    rooms: dict[str, Room] = Field(default_factory=dict)
    devices: dict[str, Device] = Field(default_factory=dict)
    scenes: dict[str, Scene] = Field(default_factory=dict)
    automations: dict[str, Automation] = Field(default_factory=dict)
    energy: dict[str, EnergyLog] = Field(default_factory=dict, description="Keyed by device id.")
    lock_codes: dict[str, list[str]] = Field(
        default_factory=dict, description="Access codes per lock id; never returned by tools."
    )
    latest_firmware: dict[str, str] = Field(
        default_factory=dict, description="Newest firmware version per device model."
    )


_TIMEZONES = {
    "Amsterdam": "Europe/Amsterdam", "Austin": "America/Chicago", "Berlin": "Europe/Berlin",
    "Boston": "America/New_York", "Chicago": "America/Chicago", "Denver": "America/Denver",
    "Dublin": "Europe/Dublin", "Lisbon": "Europe/Lisbon", "London": "Europe/London",
    "Los Angeles": "America/Los_Angeles", "Madrid": "Europe/Madrid", "Oslo": "Europe/Oslo",
    "Paris": "Europe/Paris", "Seattle": "America/Los_Angeles", "Sydney": "Australia/Sydney",
    "Tokyo": "Asia/Tokyo", "Toronto": "America/Toronto", "Zurich": "Europe/Zurich",
}
# model -> (device type, firmware versions oldest..newest, tunable/sensor kind, daily kWh range)
_MODELS: dict[str, tuple[DeviceType, tuple[str, ...], str, tuple[float, float]]] = {
    "Lumina A19": ("light", ("2.1.0", "2.2.3", "2.4.1"), "tunable", (0.05, 0.4)),
    "Lumina Basic": ("light", ("1.0.4", "1.1.0"), "", (0.05, 0.3)),
    "ClimaSense T5": ("thermostat", ("5.0.2", "5.1.0", "5.2.2"), "", (2.0, 14.0)),
    "SecureBolt S2": ("lock", ("3.3.0", "3.4.1"), "", (0.0, 0.0)),
    "EyeCam Indoor": ("camera", ("7.0.1", "7.2.0"), "", (0.08, 0.15)),
    "EyeCam Outdoor": ("camera", ("7.0.1", "7.1.5", "7.2.0"), "", (0.1, 0.2)),
    "PowerPlug Energy": ("plug", ("1.8.0", "1.9.2"), "", (0.2, 3.5)),
    "EchoTone One": ("speaker", ("12.4", "12.6", "13.0"), "", (0.02, 0.2)),
    "SenseIt Motion": ("sensor", ("0.9.8", "1.0.1"), "motion", (0.0, 0.0)),
    "SenseIt Contact": ("sensor", ("0.9.8", "1.0.1"), "contact", (0.0, 0.0)),
    "SenseIt Climate": ("sensor", ("2.0.0", "2.0.3"), "temperature", (0.0, 0.0)),
    "SenseIt Leak": ("sensor", ("1.1.0",), "leak", (0.0, 0.0)),
    "ShadeLine Motor": ("blind", ("4.0.0", "4.1.2"), "", (0.01, 0.05)),
}
# room -> (floor, [(model, device label), ...] sampled from)
_ROOMS: dict[str, tuple[int, tuple[tuple[str, str], ...]]] = {
    "Hallway": (0, (("Lumina Basic", "Ceiling Light"), ("EyeCam Indoor", "Camera"))),
    "Living Room": (0, (("Lumina A19", "Floor Lamp"), ("Lumina A19", "Ceiling Light"),
                        ("EchoTone One", "Speaker"), ("PowerPlug Energy", "TV Plug"),
                        ("ShadeLine Motor", "Blinds"))),
    "Kitchen": (0, (("Lumina Basic", "Pendant Lights"), ("PowerPlug Energy", "Coffee Maker Plug"),
                    ("SenseIt Leak", "Leak Sensor"), ("EchoTone One", "Speaker"))),
    "Bedroom": (1, (("Lumina A19", "Bedside Lamp"), ("ShadeLine Motor", "Blinds"),
                    ("SenseIt Climate", "Climate Sensor"), ("PowerPlug Energy", "Heater Plug"))),
    "Office": (1, (("Lumina A19", "Desk Lamp"), ("PowerPlug Energy", "Monitor Plug"),
                   ("EchoTone One", "Speaker"))),
    "Kids Room": (1, (("Lumina A19", "Night Light"), ("SenseIt Climate", "Climate Sensor"))),
    "Garage": (0, (("Lumina Basic", "Work Light"), ("EyeCam Outdoor", "Camera"),
                   ("PowerPlug Energy", "Charger Plug"), ("SenseIt Contact", "Door Sensor"))),
    "Patio": (0, (("Lumina Basic", "String Lights"), ("EyeCam Outdoor", "Camera"))),
    "Basement": (-1, (("Lumina Basic", "Light"), ("SenseIt Leak", "Leak Sensor"),
                      ("PowerPlug Energy", "Dehumidifier Plug"))),
}
_HOME_KINDS = ("Residence", "Apartment", "Loft", "Townhouse", "Lake House", "Cottage")


def _device(rng: random.Random, did: str, home: Home, room: Room, model: str, label: str,
            now: str) -> Device:
    kind, versions, extra, _ = _MODELS[model]
    online = rng.random() > 0.08
    dev = Device(
        device_id=did, home_id=home.home_id, room_id=room.room_id, name=f"{room.name} {label}",
        device_type=kind, model=model, firmware=rng.choice(versions), online=online,
        offline_since=None if online else days_before(now, rng, 6),
    )
    if kind == "light":
        dev.on = rng.random() < 0.4
        dev.brightness = rng.choice([20, 40, 60, 80, 100])
        dev.color_temp = rng.choice([2700, 3000, 4000, 5000]) if extra == "tunable" else None
    elif kind == "thermostat":
        dev.hvac_mode = rng.choices(["heat", "cool", "auto", "off"], weights=[5, 1, 3, 1])[0]
        dev.target_temp = float(rng.choice([18, 19, 20, 20.5, 21, 21.5, 22, 23]))
        dev.current_temp = round(rng.uniform(16.5, 24.5), 1)
    elif kind == "lock":
        dev.locked = home.mode != "home" or rng.random() < 0.6
        dev.battery = rng.choice([4, 8, 35, 62, 80, 95, 100])
    elif kind == "camera":
        dev.recording = home.mode in ("away", "vacation") or rng.random() < 0.2
    elif kind == "plug":
        dev.on = rng.random() < 0.5
        dev.power_watts = float(rng.choice([8, 45, 120, 900, 1500, 2000]))
    elif kind == "speaker":
        dev.on = rng.random() < 0.3
        dev.volume = rng.choice([15, 25, 40, 60])
    elif kind == "sensor":
        dev.sensor_kind = extra  # type: ignore[assignment]
        dev.battery = rng.choice([12, 40, 66, 88, 100])
        if extra == "temperature":
            dev.current_temp = round(rng.uniform(15.0, 26.0), 1)
    elif kind == "blind":
        dev.position = rng.choice([0, 25, 50, 100])
    return dev


def _scene_action(dev: Device, template: str) -> SceneAction | None:
    """The setting a named scene template gives one device, or None to leave it out."""
    t = dev.device_type
    if template == "Movie Night":
        if t == "light":
            return SceneAction(device_id=dev.device_id, on=True, brightness=20,
                               color_temp=2700 if dev.color_temp is not None else None)
        if t == "blind":
            return SceneAction(device_id=dev.device_id, position=0)
        if t == "speaker":
            return SceneAction(device_id=dev.device_id, on=True, volume=35)
    elif template == "Good Morning":
        if t == "light":
            return SceneAction(device_id=dev.device_id, on=True, brightness=80)
        if t == "blind":
            return SceneAction(device_id=dev.device_id, position=100)
        if t == "thermostat":
            return SceneAction(device_id=dev.device_id, target_temp=21.0, hvac_mode="heat")
    elif template in ("Good Night", "Leaving Home"):
        if t in ("light", "speaker") or (t == "plug" and template == "Leaving Home"):
            return SceneAction(device_id=dev.device_id, on=False)
        if t == "lock":
            return SceneAction(device_id=dev.device_id, locked=True)
        if t == "thermostat":
            return SceneAction(device_id=dev.device_id, target_temp=18.0)
    return None


def initial_state(seed: int) -> SmartHomeState:
    """~7 homes, ~40 rooms, ~110 devices, scenes, automations, 14 days of energy; seeded."""
    rng = random.Random(seed)
    now = "2026-03-16T18:30"
    state = SmartHomeState(now=now)
    home_id, room_id, dev_id = Counter("HOM"), Counter("RM"), Counter("DEV")
    scn_id, aut_id = Counter("SCN"), Counter("AUT")
    today = datetime.fromisoformat(now).date()
    days = [(today - timedelta(days=k)).isoformat() for k in range(14, 0, -1)]
    state.latest_firmware = {m: spec[1][-1] for m, spec in _MODELS.items()}
    owners = [person(rng) for _ in range(rng.randrange(5, 7))]
    for i in range(rng.randrange(6, 9)):
        owner = owners[i % len(owners)]
        city = rng.choice(sorted(_TIMEZONES))
        hid = home_id()
        surname = owner.split()[1] if i < len(owners) else rng.choice(LAST_NAMES)
        home = Home(
            home_id=hid, name=f"{surname} {rng.choice(_HOME_KINDS)}", owner=owner,
            owner_email=email(owner, "home.example.com"),
            address=f"{rng.randrange(1, 220)} {rng.choice(STREETS)}, {city}", city=city,
            timezone=_TIMEZONES[city],
            mode=rng.choices(["home", "away", "vacation", "night"], weights=[6, 2, 1, 1])[0],
            mode_changed_at=days_before(now, rng, 10),
        )
        state.homes[hid] = home
        names = ["Hallway", "Living Room", "Kitchen"] + rng.sample(
            ["Bedroom", "Office", "Kids Room", "Garage", "Patio", "Basement"], rng.randrange(1, 5))
        devices: list[Device] = []
        for rname in names:
            floor, options = _ROOMS[rname]
            room = Room(room_id=room_id(), home_id=hid, name=rname, floor=floor)
            state.rooms[room.room_id] = room
            picks = list(rng.sample(options, rng.randrange(1, len(options) + 1)))
            if rname == "Hallway":
                picks = [("SecureBolt S2", "Front Door Lock"), ("SenseIt Motion", "Motion Sensor"),
                         *picks]
            elif rname == "Living Room":
                picks = [("ClimaSense T5", "Thermostat"), *picks]
            elif rname == "Garage" and rng.random() < 0.5:
                picks.append(("SecureBolt S2", "Side Door Lock"))
            for model, label in picks:
                dev = _device(rng, dev_id(), home, room, model, label, now)
                state.devices[dev.device_id] = dev
                devices.append(dev)
                if dev.device_type == "lock":
                    state.lock_codes[dev.device_id] = sorted(
                        f"{rng.randrange(10 ** n):0{n}d}" for n in rng.sample([4, 5, 6], 2))
                low, high = _MODELS[model][3]
                if high > 0:
                    state.energy[dev.device_id] = EnergyLog(
                        device_id=dev.device_id, home_id=hid,
                        daily_kwh={d: round(rng.uniform(low, high), 3) for d in days})
        scenes: dict[str, str] = {}
        for template in rng.sample(["Movie Night", "Good Morning", "Good Night", "Leaving Home"],
                                   rng.randrange(2, 5)):
            actions = [a for a in (_scene_action(d, template) for d in devices) if a is not None]
            sid = scn_id()
            scenes[template] = sid
            state.scenes[sid] = Scene(
                scene_id=sid, home_id=hid, name=template, actions=actions,
                created_at=days_before(now, rng, 300, 20),
                last_activated=days_before(now, rng, 14) if rng.random() < 0.7 else None,
            )
        first = next(iter(scenes.values()))
        motion = next(d for d in devices if d.sensor_kind == "motion")
        front = next(d for d in devices if d.device_type == "lock")
        thermo = next(d for d in devices if d.device_type == "thermostat")
        rules: list[tuple[str, Trigger, dict]] = [
            ("Hallway motion", "motion", {"trigger_device_id": motion.device_id,
                                          "only_in_modes": ["night"]}),
            ("Evening routine", "time", {"at_time": rng.choice(["18:00", "19:30", "21:00"])}),
            ("Door opened while away", "door_open", {"trigger_device_id": front.device_id,
                                                     "only_in_modes": ["away", "vacation"]}),
            ("Too warm", "temperature", {"trigger_device_id": thermo.device_id,
                                         "threshold_c": float(rng.choice([25, 26, 27]))}),
        ]
        for name, trigger, extra in rng.sample(rules, rng.randrange(1, 4)):
            aid = aut_id()
            state.automations[aid] = Automation(
                automation_id=aid, home_id=hid, name=name, trigger=trigger,
                scene_id=rng.choice(list(scenes.values())) if trigger != "motion" else first,
                enabled=rng.random() < 0.8, created_at=days_before(now, rng, 200, 15),
                last_triggered=days_before(now, rng, 7) if rng.random() < 0.6 else None, **extra,
            )
    return state
