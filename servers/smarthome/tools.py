"""Smart-home tools: homes, rooms, devices, lights, thermostats, locks, scenes, automations, energy."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import ToolError, tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    Limit,
    Offset,
    Page,
    clock,
    day,
    entity_id,
    entity_ids,
    measure,
    naming,
    parse_day,
    text,
)
from prove_servers.smarthome.state import (
    FIRMWARE_MIN_BATTERY,
    LOCK_MIN_BATTERY,
    MAX_TARGET_C,
    MIN_TARGET_C,
    Automation,
    Device,
    DeviceId,
    DeviceType,
    Home,
    HomeId,
    HomeMode,
    RoomId,
    Scene,
    SceneAction,
    SceneId,
    SmartHomeState,
    ThermostatMode,
    Trigger,
)

# What a scene action (and so a device command) may set, per device type.
_SETTABLE: dict[DeviceType, tuple[str, ...]] = {
    "light": ("on", "brightness", "color_temp"),
    "plug": ("on",),
    "speaker": ("on", "volume"),
    "thermostat": ("target_temp", "hvac_mode"),
    "lock": ("locked",),
    "camera": ("recording",),
    "blind": ("position",),
    "sensor": (),
}
_SETTINGS = ("on", "brightness", "color_temp", "target_temp", "hvac_mode", "locked", "recording",
             "position", "volume")


class DeviceRef(BaseModel):
    device_id: DeviceId
    name: str = Field(json_schema_extra=naming("name"))


class HomeList(Page):
    homes: list[Home]


class RoomInfo(BaseModel):
    room_id: RoomId
    name: str = Field(json_schema_extra=naming("name"))
    floor: int
    device_count: int
    offline_count: int


class RoomList(Page):
    home_id: HomeId
    rooms: list[RoomInfo]


class DeviceList(Page):
    devices: list[Device]


class DeviceDetails(Device):
    room_name: str
    latest_firmware: str
    update_available: bool


class SceneList(Page):
    scenes: list[Scene]


class AutomationList(Page):
    automations: list[Automation]


class DeviceEnergy(BaseModel):
    device_id: DeviceId
    name: str = Field(json_schema_extra=naming("name"))
    device_type: DeviceType
    kwh: float


class DailyEnergy(BaseModel):
    date: str
    kwh: float


class EnergyReport(BaseModel):
    home_id: HomeId
    start_date: str
    end_date: str
    total_kwh: float
    days_with_data: int
    devices: list[DeviceEnergy] = Field(description="Per device, largest consumer first.")
    daily: list[DailyEnergy]


class HomeStatus(BaseModel):
    home_id: HomeId
    name: str = Field(json_schema_extra=naming("name"))
    mode: HomeMode
    now: str
    device_count: int
    offline_devices: list[DeviceRef]
    unlocked_doors: list[DeviceRef]
    low_battery_devices: list[DeviceRef] = Field(description=f"Battery below {FIRMWARE_MIN_BATTERY}%.")
    lights_on: list[DeviceRef]
    recording_cameras: list[DeviceRef]
    plug_load_watts: float = Field(description="Sum of power_watts of the plugs switched on.")
    indoor_temp_c: float | None = Field(description="Mean reading of the thermostats.")
    enabled_automations: int


class SceneActivation(BaseModel):
    scene_id: SceneId
    home_id: HomeId
    name: str = Field(json_schema_extra=naming("name"))
    devices: list[DeviceRef]
    activated_at: str


class HomeModeChange(BaseModel):
    home_id: HomeId
    previous_mode: HomeMode
    mode: HomeMode
    changed_at: str
    cameras_started: entity_ids("device", "Cameras that started recording.")
    cameras_stopped: entity_ids("device", "Cameras that stopped recording.")


class FirmwareUpdate(BaseModel):
    device_id: DeviceId
    name: str = Field(json_schema_extra=naming("name"))
    model: str
    previous_firmware: str
    firmware: str
    updated_at: str


def _home(state: SmartHomeState, home_id: str) -> Home:
    return find(state.homes, home_id)


def _device(state: SmartHomeState, device_id: str, param: str = "device_id") -> Device:
    return find(state.devices, device_id)


def _ref(dev: Device) -> DeviceRef:
    return DeviceRef(device_id=dev.device_id, name=dev.name)


def _of_type(state: SmartHomeState, dev: Device, types: tuple[DeviceType, ...], what: str) -> None:
    same = [d.device_id for d in state.devices.values()
            if d.home_id == dev.home_id and d.device_type in types]
    require(dev.device_type in types,
            f"device '{dev.device_id}' ({dev.name}) is a {dev.device_type}, not a "
            f"{' or '.join(types)}; {what} in home '{dev.home_id}': {known(same)}",
            rejected=(dev.device_id, dev.device_type, what, dev.home_id), choices=shown(same))


def _online(dev: Device) -> None:
    require(dev.online, f"device '{dev.device_id}' ({dev.name}) is offline since "
            f"{dev.offline_since}; it cannot take commands until it reconnects",
            rejected=(dev.device_id, dev.offline_since))


def _battery_ok(dev: Device) -> None:
    require(dev.battery is None or dev.battery >= LOCK_MIN_BATTERY,
            f"lock '{dev.device_id}' ({dev.name}) battery is at {dev.battery}%; below "
            f"{LOCK_MIN_BATTERY}% the bolt motor is disabled, so the batteries must be replaced first",
            rejected=(dev.device_id, dev.battery, LOCK_MIN_BATTERY))


def _set_fields(action: SceneAction) -> list[str]:
    return [f for f in _SETTINGS if getattr(action, f) is not None]


def _check_action(state: SmartHomeState, home: Home, action: SceneAction, i: int) -> None:
    where = f"actions[{i}]"
    in_home = [d.device_id for d in state.devices.values() if d.home_id == home.home_id]
    dev = state.devices.get(action.device_id)
    if dev is None or dev.home_id != home.home_id:
        raise ToolError(f"{where}.device_id: device '{action.device_id}' not found in home "
                        f"'{home.home_id}'; devices there: {known(in_home, 12)}",
                        reason='not_found', rejected=(where, action.device_id, home.home_id),
                        choices=shown(in_home, 12))
    fields = _set_fields(action)
    allowed = _SETTABLE[dev.device_type]
    require(bool(allowed), f"{where}: '{dev.device_id}' is a {dev.device_type}; sensors are read-only "
            "and cannot be part of a scene",
            reason='state', rejected=(where, dev.device_id, dev.device_type))
    require(bool(fields), f"{where} sets nothing; for a {dev.device_type} set {', '.join(allowed)}",
            rejected=(where, dev.device_type), choices=tuple(allowed))
    bad = [f for f in fields if f not in allowed]
    require(not bad, f"{where}: '{dev.device_id}' is a {dev.device_type} and has no "
            f"{', '.join(bad)}; a {dev.device_type} accepts {', '.join(allowed)}",
            rejected=(where, dev.device_id, dev.device_type),
            choices=(*tuple(bad), *tuple(allowed),))
    require(action.color_temp is None or dev.color_temp is not None,
            f"{where}: light '{dev.device_id}' ({dev.model}) has no tunable colour temperature",
            rejected=(where, dev.device_id))
    require(action.locked is not False,
            f"{where}: scenes cannot unlock doors; use unlock_door with the lock's access code",
            params=('code',), rejected=(where,))


@tool()
def list_homes(
    state: SmartHomeState,
    query: text("query", "Case-insensitive substring of the home or owner name.", listed="name") = "",
    city: text("word", "Only homes in this city.", listed="city", optional=True) = None,
    mode: Annotated[HomeMode | None, Field(description="Only homes currently in this mode.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> HomeList:
    """Find smart homes on the hub by home or owner name, city or current mode, a page at a time."""
    q = query.strip().lower()
    found = [
        h for h in state.homes.values()
        if (q in h.name.lower() or q in h.owner.lower())
        and (city is None or h.city.lower() == city.strip().lower())
        and (mode is None or h.mode == mode)
    ]
    return HomeList.of(found, offset, limit)


@tool(sensitive=("home_id",))
def list_home_rooms(state: SmartHomeState, home_id: HomeId, offset: Offset = 0,
               limit: Limit = DEFAULT_LIMIT) -> RoomList:
    """List the rooms of a home with how many devices each has and how many are offline, a page at a time."""
    _home(state, home_id)
    rooms = []
    for room in state.rooms.values():
        if room.home_id != home_id:
            continue
        devs = [d for d in state.devices.values() if d.room_id == room.room_id]
        rooms.append(RoomInfo(room_id=room.room_id, name=room.name, floor=room.floor,
                              device_count=len(devs), offline_count=sum(not d.online for d in devs)))
    return RoomList.of(rooms, offset, limit, home_id=home_id)


@tool(sensitive=("home_id", "room_id"))
def list_devices(
    state: SmartHomeState,
    home_id: Annotated[HomeId | None, Field(description="Only devices in this home, e.g. 'HOM-0002'.", json_schema_extra={EXAMPLE: "HOM-0002"})] = None,
    room_id: Annotated[RoomId | None, Field(description="Only devices in this room, e.g. 'RM-0005'.", json_schema_extra={EXAMPLE: "RM-0005"})] = None,
    device_type: Annotated[DeviceType | None, Field(description="Only devices of this type.")] = None,
    online: Annotated[bool | None, Field(description="true: only online; false: only offline.")] = None,
    update_available: Annotated[
        bool | None, Field(description="true: only devices with newer firmware available.")
    ] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> DeviceList:
    """List devices filtered by home, room, type, connectivity and pending firmware, a page at a time."""
    if home_id is not None:
        _home(state, home_id)
    if room_id is not None:
        room = find(state.rooms, room_id)
        require(home_id is None or room.home_id == home_id,
                f"room '{room_id}' belongs to home '{room.home_id}', not '{home_id}'; rooms of "
                f"'{home_id}': {known(r.room_id for r in state.rooms.values() if r.home_id == home_id)}",
                rejected=(room_id, room.home_id, home_id),
                choices=shown(r.room_id for r in state.rooms.values() if r.home_id == home_id))
    found = [
        d for d in state.devices.values()
        if (home_id is None or d.home_id == home_id)
        and (room_id is None or d.room_id == room_id)
        and (device_type is None or d.device_type == device_type)
        and (online is None or d.online == online)
        and (update_available is None
             or (d.firmware != state.latest_firmware[d.model]) == update_available)
    ]
    return DeviceList.of(found, offset, limit)


@tool(sensitive=("device_id",))
def get_device_state(state: SmartHomeState, device_id: DeviceId) -> DeviceDetails:
    """Get one device's full state: room, connectivity, settings, battery and firmware status."""
    dev = _device(state, device_id)
    latest = state.latest_firmware[dev.model]
    return DeviceDetails(**dev.model_dump(), room_name=state.rooms[dev.room_id].name,
                         latest_firmware=latest, update_available=dev.firmware != latest)


@tool(sensitive=("home_id",))
def get_home_status(state: SmartHomeState, home_id: HomeId) -> HomeStatus:
    """Summarise a home right now: mode, offline devices, unlocked doors, lights on, load, temperature."""
    home = _home(state, home_id)
    devs = [d for d in state.devices.values() if d.home_id == home_id]
    temps = [d.current_temp for d in devs if d.device_type == "thermostat" and d.current_temp is not None]
    return HomeStatus(
        home_id=home_id, name=home.name, mode=home.mode, now=state.now, device_count=len(devs),
        offline_devices=[_ref(d) for d in devs if not d.online],
        unlocked_doors=[_ref(d) for d in devs if d.locked is False],
        low_battery_devices=[_ref(d) for d in devs
                             if d.battery is not None and d.battery < FIRMWARE_MIN_BATTERY],
        lights_on=[_ref(d) for d in devs if d.device_type == "light" and d.on],
        recording_cameras=[_ref(d) for d in devs if d.recording],
        plug_load_watts=round(sum(d.power_watts or 0.0 for d in devs
                                  if d.device_type == "plug" and d.on), 1),
        indoor_temp_c=round(sum(temps) / len(temps), 1) if temps else None,
        enabled_automations=sum(a.enabled for a in state.automations.values()
                                if a.home_id == home_id),
    )


@tool(sensitive=("home_id", "room_id", "device_id"))
def get_energy_usage(
    state: SmartHomeState,
    home_id: HomeId,
    start_date: Annotated[
        day("First day.", listed="start_date") | None, Field(description="First day (default: 7 days ago).")
    ] = None,
    end_date: Annotated[day("Last day.", listed="end_date", role="end") | None, Field(description="Last day (default: yesterday).")] = None,
    room_id: Annotated[RoomId | None, Field(description="Only devices in this room of the home.")] = None,
    device_id: Annotated[DeviceId | None, Field(description="Only this metered device of the home.")] = None,
) -> EnergyReport:
    """Report a home's electricity use in kWh over a date range, per device and per day."""
    _home(state, home_id)
    today = state.now_dt().date()
    end = parse_day(end_date, "end_date") if end_date else today - timedelta(days=1)
    start = parse_day(start_date, "start_date") if start_date else end - timedelta(days=6)
    require(start <= end, f"start_date {start} is after end_date {end}",
            params=('end_date', 'start_date'), rejected=(start, end))
    if room_id is not None:
        room = find(state.rooms, room_id)
        require(room.home_id == home_id, f"room '{room_id}' is not in home '{home_id}'; rooms there: "
                + known(r.room_id for r in state.rooms.values() if r.home_id == home_id),
                rejected=(room_id, home_id),
                choices=shown(r.room_id for r in state.rooms.values() if r.home_id == home_id))
    metered = [d for d in state.devices.values() if d.home_id == home_id and d.device_id in state.energy]
    if device_id is not None:
        dev = _device(state, device_id)
        require(dev.device_id in state.energy and dev.home_id == home_id,
                f"device '{device_id}' is not a metered device of home '{home_id}'; metered devices "
                f"there: {known((d.device_id for d in metered), 12)}",
                rejected=(device_id, home_id), choices=shown((d.device_id for d in metered), 12))
    lo, hi = start.isoformat(), end.isoformat()
    per_device: list[DeviceEnergy] = []
    per_day: dict[str, float] = {}
    for d in metered:
        if (room_id is not None and d.room_id != room_id) or device_id not in (None, d.device_id):
            continue
        kwh = 0.0
        for when, value in state.energy[d.device_id].daily_kwh.items():
            if lo <= when <= hi:
                kwh += value
                per_day[when] = per_day.get(when, 0.0) + value
        per_device.append(DeviceEnergy(device_id=d.device_id, name=d.name,
                                       device_type=d.device_type, kwh=round(kwh, 3)))
    per_device.sort(key=lambda e: (-e.kwh, e.device_id))
    return EnergyReport(
        home_id=home_id, start_date=lo, end_date=hi,
        total_kwh=round(sum(e.kwh for e in per_device), 3), days_with_data=len(per_day),
        devices=per_device,
        daily=[DailyEnergy(date=d, kwh=round(v, 3)) for d, v in sorted(per_day.items())],
    )


@tool(sensitive=("home_id",))
def list_scenes(state: SmartHomeState, home_id: HomeId, offset: Offset = 0,
                limit: Limit = DEFAULT_LIMIT) -> SceneList:
    """List a home's scenes with the device settings each one applies, a page at a time."""
    _home(state, home_id)
    scenes = [s for s in state.scenes.values() if s.home_id == home_id]
    return SceneList.of(scenes, offset, limit)


@tool(sensitive=("home_id",))
def list_automations(
    state: SmartHomeState,
    home_id: HomeId,
    enabled: Annotated[bool | None, Field(description="true: only enabled; false: only disabled.")] = None,
    trigger: Annotated[Trigger | None, Field(description="Only automations with this trigger.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> AutomationList:
    """List a home's automations (trigger, conditions, scene run, enabled flag), a page at a time."""
    _home(state, home_id)
    found = [
        a for a in state.automations.values()
        if a.home_id == home_id and (enabled is None or a.enabled == enabled)
        and (trigger is None or a.trigger == trigger)
    ]
    return AutomationList.of(found, offset, limit)


@tool(write=True, sensitive=("device_id", "brightness", "color_temp"))
def set_light(
    state: SmartHomeState,
    device_id: DeviceId,
    on: Annotated[bool, Field(description="true to switch the light on, false to switch it off.")],
    brightness: Annotated[
        int | None, Field(json_schema_extra=measure("level"), ge=1, le=100, description="Brightness 1-100 percent (only with on=true).")
    ] = None,
    color_temp: Annotated[int | None, Field(
        ge=2200, le=6500,
        description="Colour temperature in kelvin, 2200 (warm) to 6500 (cool); tunable lights only.",
    )] = None,
) -> Device:
    """Switch a light on or off and optionally set its brightness and colour temperature."""
    dev = _device(state, device_id)
    _of_type(state, dev, ("light",), "lights")
    _online(dev)
    require(on or (brightness is None and color_temp is None),
            "brightness and color_temp can only be set when switching the light on (on=true)",
            reason='state', params=('brightness', 'color_temp'), wanted=('light',))
    require(color_temp is None or dev.color_temp is not None,
            f"light '{device_id}' ({dev.model}) has no tunable colour temperature; leave color_temp unset",
            params=('color_temp',), rejected=(device_id,))
    state.advance()
    dev.on = on
    if brightness is not None:
        dev.brightness = brightness
    if color_temp is not None:
        dev.color_temp = color_temp
    return dev


@tool(write=True, sensitive=("device_id", "target_temp"))
def set_thermostat(
    state: SmartHomeState,
    device_id: DeviceId,
    target_temp: Annotated[float | None, Field(json_schema_extra=measure("temperature"),
        ge=MIN_TARGET_C, le=MAX_TARGET_C, description="New set-point in °C, 10-30.",
    )] = None,
    mode: Annotated[
        ThermostatMode | None, Field(description="New HVAC mode: heat, cool, auto or off.")
    ] = None,
) -> Device:
    """Change a thermostat's target temperature and/or its HVAC mode."""
    require(target_temp is not None or mode is not None, "give target_temp, mode or both",
            reason='missing', params=('mode', 'target_temp'))
    dev = _device(state, device_id)
    _of_type(state, dev, ("thermostat",), "thermostats")
    _online(dev)
    state.advance()
    if target_temp is not None:
        dev.target_temp = round(target_temp, 1)
    if mode is not None:
        dev.hvac_mode = mode
    return dev


@tool(write=True, sensitive=("device_id",))
def lock_door(state: SmartHomeState, device_id: DeviceId) -> Device:
    """Lock a smart door lock."""
    dev = _device(state, device_id)
    _of_type(state, dev, ("lock",), "locks")
    _online(dev)
    require(not dev.locked, f"lock '{device_id}' ({dev.name}) is already locked",
            reason='conflict', rejected=(device_id,))
    _battery_ok(dev)
    state.advance()
    dev.locked = True
    return dev


@tool(write=True, sensitive=("device_id", "code"))
def unlock_door(
    state: SmartHomeState,
    device_id: DeviceId,
    code: text("word", "The lock's 4-6 digit access code, as given by the user.", pattern=r"^\d{4,6}$"),
) -> Device:
    """Unlock a smart door lock with one of its access codes."""
    dev = _device(state, device_id)
    _of_type(state, dev, ("lock",), "locks")
    _online(dev)
    require(dev.locked is not False, f"lock '{device_id}' ({dev.name}) is already unlocked",
            reason='conflict', rejected=(device_id,))
    _battery_ok(dev)
    require(code in state.lock_codes.get(device_id, []),
            f"wrong access code for lock '{device_id}' (parameter 'code'); "
            "ask the user for the right code", params=('code',), rejected=(device_id,))
    state.advance()
    dev.locked = False
    return dev


@tool(write=True, sensitive=("home_id", "actions"))
def create_scene(
    state: SmartHomeState,
    home_id: HomeId,
    name: text("title", "Scene name, unique in the home, e.g. 'Reading'.", listed="name", example="Reading", min_length=1, max_length=60),
    actions: Annotated[list[SceneAction], Field(
        min_length=1, max_length=30,
        description="One entry per device of the home: the settings the scene applies to it.",
    )],
) -> Scene:
    """Create a named scene in a home: a set of device settings applied together by activate_scene."""
    home = _home(state, home_id)
    clean = name.strip()
    dup = next((s for s in state.scenes.values()
                if s.home_id == home_id and s.name.lower() == clean.lower()), None)
    require(dup is None, f"home '{home_id}' already has a scene named '{clean}' "
            f"('{dup.scene_id if dup else ''}'); choose another name",
            reason='conflict', params=('name',),
            rejected=(home_id, clean, dup.scene_id if dup else ''))
    ids = [a.device_id for a in actions]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    require(not repeated, f"each device may appear once per scene; repeated: {', '.join(repeated)}",
            choices=tuple(repeated))
    for i, action in enumerate(actions):
        _check_action(state, home, action, i)
    scene = Scene(scene_id=state.new_id("SCN"), home_id=home_id, name=clean,
                  actions=[a.model_copy() for a in actions], created_at=state.now)
    state.scenes[scene.scene_id] = scene
    return scene


@tool(write=True, sensitive=("scene_id",))
def activate_scene(
    state: SmartHomeState,
    scene_id: SceneId,
) -> SceneActivation:
    """Apply every device setting of a scene at once; fails without changes if a device cannot comply."""
    scene = find(state.scenes, scene_id)
    devs = [state.devices[a.device_id] for a in scene.actions]
    offline = [f"{d.device_id} ({d.name}, offline since {d.offline_since})" for d in devs if not d.online]
    require(not offline, f"scene '{scene_id}' cannot run: offline devices: {'; '.join(offline)}",
            rejected=(scene_id,))
    for dev, action in zip(devs, scene.actions, strict=True):
        if action.locked:
            _battery_ok(dev)
    state.advance()
    for dev, action in zip(devs, scene.actions, strict=True):
        for field in _set_fields(action):
            setattr(dev, field, getattr(action, field))
    scene.last_activated = state.now
    return SceneActivation(scene_id=scene_id, home_id=scene.home_id, name=scene.name,
                           devices=[_ref(d) for d in devs], activated_at=state.now)


_TRIGGER_DEVICES: dict[str, tuple[tuple[DeviceType, ...], str, str]] = {
    "motion": (("sensor",), "motion", "motion sensors"),
    "door_open": (("lock", "sensor"), "contact", "locks or contact sensors"),
    "temperature": (("thermostat", "sensor"), "temperature", "thermostats or temperature sensors"),
}


@tool(write=True, sensitive=("home_id", "scene_id", "trigger_device_id", "at_time", "threshold_c"))
def create_automation(
    state: SmartHomeState,
    home_id: HomeId,
    name: text("title", "Automation name, unique in the home.", listed="name", min_length=1, max_length=60),
    trigger: Annotated[Trigger, Field(
        description="What fires it: a time of day, motion, a door opening, or a temperature threshold.",
    )],
    scene_id: entity_id("scene", "Scene of the same home to activate when it fires, e.g. 'SCN-0002'.", example="SCN-0002"),
    trigger_device_id: Annotated[DeviceId | None, Field(
        description="Device watched: a motion sensor (motion), a lock or contact sensor (door_open), "
        "a thermostat or temperature sensor (temperature). Not for 'time'.",
    )] = None,
    at_time: clock("For trigger 'time': local time HH:MM.", optional=True) = None,
    threshold_c: Annotated[float | None, Field(json_schema_extra=measure("temperature"),
        ge=-20, le=50, description="For trigger 'temperature': fire when the reading rises above this °C.",
    )] = None,
    only_in_mode: Annotated[HomeMode | None, Field(
        description="Condition: run only while the home is in this mode (default: any mode).",
    )] = None,
    enabled: Annotated[bool, Field(description="Whether it starts enabled.")] = True,
) -> Automation:
    """Create an automation that activates a scene when its trigger fires (and its mode condition holds)."""
    _home(state, home_id)
    clean = name.strip()
    dup = next((a for a in state.automations.values()
                if a.home_id == home_id and a.name.lower() == clean.lower()), None)
    require(dup is None, f"home '{home_id}' already has an automation named '{clean}' "
            f"('{dup.automation_id if dup else ''}'); choose another name",
            reason='conflict', params=('name',),
            rejected=(home_id, clean, dup.automation_id if dup else ''))
    scene = find(state.scenes, scene_id)
    require(scene.home_id == home_id, f"scene '{scene_id}' belongs to home '{scene.home_id}'; scenes of "
            f"'{home_id}': {known(s.scene_id for s in state.scenes.values() if s.home_id == home_id)}",
            rejected=(scene_id, scene.home_id, home_id),
            choices=shown(s.scene_id for s in state.scenes.values() if s.home_id == home_id))
    if trigger == "time":
        require(at_time is not None, "trigger 'time' needs at_time (HH:MM)",
                reason='missing', params=('at_time', 'trigger'))
        require(trigger_device_id is None and threshold_c is None,
                "trigger 'time' takes only at_time; leave trigger_device_id and threshold_c unset",
                reason='state', params=('at_time', 'threshold_c', 'trigger', 'trigger_device_id'))
    else:
        types, kind, what = _TRIGGER_DEVICES[trigger]
        if trigger_device_id is None:
            raise ToolError(f"trigger '{trigger}' needs trigger_device_id ({what})",
                            reason='missing', params=('trigger', 'trigger_device_id'),
                            rejected=(trigger,))
        dev = _device(state, trigger_device_id, "trigger_device_id")
        fits = [d.device_id for d in state.devices.values() if d.home_id == home_id
                and d.device_type in types and (d.device_type != "sensor" or d.sensor_kind == kind)]
        is_a = f"{dev.sensor_kind} sensor" if dev.sensor_kind else dev.device_type
        require(trigger_device_id in fits,
                f"trigger_device_id '{trigger_device_id}' is a {is_a} of home '{dev.home_id}'; "
                f"a '{trigger}' trigger in home '{home_id}' needs one of its {what}: {known(fits)}",
                reason='missing', params=('trigger', 'trigger_device_id'),
                rejected=(trigger_device_id, is_a, dev.home_id, trigger, home_id, what),
                choices=shown(fits))
        require(at_time is None, f"at_time only applies to trigger 'time', not '{trigger}'",
                reason='state', params=('at_time', 'trigger'), rejected=(trigger,))
        require((threshold_c is not None) == (trigger == "temperature"),
                "threshold_c is required for trigger 'temperature' and only applies to it",
                reason='state', params=('threshold_c', 'trigger'))
    auto = Automation(
        automation_id=state.new_id("AUT"), home_id=home_id, name=clean, trigger=trigger,
        trigger_device_id=trigger_device_id, at_time=at_time, threshold_c=threshold_c,
        only_in_modes=[only_in_mode] if only_in_mode else [], scene_id=scene_id, enabled=enabled,
        created_at=state.now,
    )
    state.automations[auto.automation_id] = auto
    return auto


@tool(write=True, sensitive=("home_id",))
def set_home_mode(
    state: SmartHomeState,
    home_id: HomeId,
    mode: Annotated[HomeMode, Field(description="New mode: home, away, vacation or night.")],
) -> HomeModeChange:
    """Switch a home's mode. Away/vacation need every door locked and start the online cameras
    recording; back to home stops them."""
    home = _home(state, home_id)
    require(home.mode != mode, f"home '{home_id}' is already in mode '{mode}'",
            reason='conflict', params=('mode',), rejected=(home_id, mode))
    devs = [d for d in state.devices.values() if d.home_id == home_id]
    if mode in ("away", "vacation"):
        unlocked = [f"{d.device_id} ({d.name})" for d in devs if d.locked is False]
        require(not unlocked, f"cannot switch home '{home_id}' to '{mode}' with unlocked doors: "
                f"{', '.join(unlocked)}; lock them first with lock_door",
                rejected=(home_id, mode), choices=tuple(unlocked))
    state.advance()
    previous = home.mode
    home.mode, home.mode_changed_at = mode, state.now
    record = {"away": True, "vacation": True, "home": False}.get(mode)
    started, stopped = [], []
    for cam in devs:
        if cam.device_type == "camera" and cam.online and record is not None and cam.recording != record:
            cam.recording = record
            (started if record else stopped).append(cam.device_id)
    return HomeModeChange(home_id=home_id, previous_mode=previous, mode=mode, changed_at=state.now,
                          cameras_started=started, cameras_stopped=stopped)


@tool(write=True, sensitive=("device_id",))
def update_device_firmware(state: SmartHomeState, device_id: DeviceId) -> FirmwareUpdate:
    """Install the newest firmware for a device's model; the device must be online and charged."""
    dev = _device(state, device_id)
    _online(dev)
    latest = state.latest_firmware[dev.model]
    require(dev.firmware != latest,
            f"device '{device_id}' ({dev.name}) already runs the latest firmware {latest} for {dev.model}",
            reason='conflict', rejected=(device_id, latest, dev.model))
    require(dev.battery is None or dev.battery >= FIRMWARE_MIN_BATTERY,
            f"device '{device_id}' ({dev.name}) battery is at {dev.battery}%; firmware updates need "
            f"at least {FIRMWARE_MIN_BATTERY}%",
            reason='limit', rejected=(device_id, dev.battery, FIRMWARE_MIN_BATTERY))
    state.advance()
    previous, dev.firmware, dev.firmware_updated_at = dev.firmware, latest, state.now
    return FirmwareUpdate(device_id=device_id, name=dev.name, model=dev.model,
                          previous_firmware=previous, firmware=latest, updated_at=state.now)
