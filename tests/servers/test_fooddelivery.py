"""Food delivery server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub, state_hash
from prove_servers.fooddelivery import SERVER
from prove_servers.fooddelivery.state import (
    BasketLine,
    Courier,
    DeliveryAddress,
    FoodBasket,
    FoodCustomer,
    FoodOrder,
    FoodOrderLine,
    FoodState,
    ItemOption,
    MenuItem,
    PromoCode,
    Restaurant,
    initial_state,
    is_open,
)


def _order(oid: str, cid: str, rid: str, status: str, subtotal: float, **extra) -> FoodOrder:
    tip = extra.pop("tip", 0.0)
    return FoodOrder(order_id=oid, customer_id=cid, restaurant_id=rid, address_id="ADR-0001", zone="downtown",
                     lines=[FoodOrderLine(item_id="ITM-0001", name="Margherita Pizza", quantity=2, unit_price=subtotal / 2)],
                     subtotal=subtotal, delivery_fee=2.0, tip=tip, total=subtotal + 2.0 + tip, payment_method="card",
                     status=status, **extra)


def tiny() -> FoodState:
    s = FoodState(now="2026-03-16T19:30")
    for cid, name, ph in (("FCU-0001", "Ada Chen", "+1-555-100-1001"), ("FCU-0002", "Bo Silva", "+1-555-200-2002"),
                          ("FCU-0003", "Cy Okafor", "+1-555-300-3003")):
        s.customers[cid] = FoodCustomer(customer_id=cid, name=name, phone=ph, email=f"{name.split()[0].lower()}@x.com",
                                        member_since="2024-01-01")
    for aid, cid, label, zone in (("ADR-0001", "FCU-0001", "home", "downtown"), ("ADR-0002", "FCU-0001", "work", "harbor"),
                                  ("ADR-0003", "FCU-0002", "home", "downtown"), ("ADR-0004", "FCU-0003", "home", "downtown")):
        s.addresses[aid] = DeliveryAddress(address_id=aid, customer_id=cid, label=label, street="1 Oak Street", zone=zone)
    for rid, name, cuisine, zone, zones, hours, fee, minimum, rating in (
        ("RST-0001", "Forno Rosso", "italian", "downtown", ["downtown", "midtown"], ("11:00", "23:00"), 2.0, 15.0, 4.0),
        ("RST-0002", "Sakura Sushi Bar", "japanese", "midtown", ["midtown"], ("11:00", "15:00"), 1.0, 10.0, 4.8),
        ("RST-0003", "Spice Route", "indian", "downtown", ["downtown"], ("18:00", "02:00"), 0.0, 10.0, 4.5),
    ):
        s.restaurants[rid] = Restaurant(restaurant_id=rid, name=name, cuisine=cuisine, zone=zone, delivery_zones=zones,
                                        rating=rating, rating_count=4, opens_at=hours[0], closes_at=hours[1],
                                        accepting_orders=True, delivery_fee=fee, min_order=minimum, prep_minutes=15)
    for iid, rid, name, cat, price, tags, available, options in (
        ("ITM-0001", "RST-0001", "Margherita Pizza", "main", 10.0, ["vegetarian"], True, [("large portion", 3.0)]),
        ("ITM-0002", "RST-0001", "Tiramisu", "dessert", 6.0, ["vegetarian"], True, []),
        ("ITM-0003", "RST-0001", "Diavola Pizza", "main", 12.0, [], False, []),
        ("ITM-0004", "RST-0002", "Salmon Nigiri Set", "main", 16.0, ["gluten_free"], True, []),
        ("ITM-0005", "RST-0003", "Chana Masala", "main", 11.5, ["gluten_free", "halal", "vegan"], True, []),
    ):
        s.menu_items[iid] = MenuItem(item_id=iid, restaurant_id=rid, name=name, category=cat, price=price,
                                     dietary_tags=tags, available=available,
                                     options=[ItemOption(name=n, extra_price=p) for n, p in options])
    s.couriers["COU-0001"] = Courier(courier_id="COU-0001", name="Cai Rider", phone="+1-555-400-4004", vehicle="bike",
                                     zone="downtown", status="available", rating=4.5, rating_count=10)
    s.couriers["COU-0002"] = Courier(courier_id="COU-0002", name="Dee Driver", phone="+1-555-500-5005", vehicle="car",
                                     zone="midtown", status="off_shift", rating=4.9, rating_count=30)
    for code, kind, value, min_sub, expires, where in (
        ("PIZZA20", "percent", 20.0, 20.0, "2026-06-30", ["RST-0001"]),
        ("SUSHI15", "percent", 15.0, 0.0, "2026-06-30", ["RST-0002"]),
        ("FREEDEL", "free_delivery", 0.0, 10.0, "2026-04-30", []),
        ("LUNCH10", "percent", 10.0, 0.0, "2026-03-01", []),
    ):
        s.promos[code] = PromoCode(code=code, description=code, kind=kind, value=value, min_subtotal=min_sub,
                                   expires_on=expires, restaurant_ids=where)
    s.orders["FOD-0001"] = _order("FOD-0001", "FCU-0001", "RST-0001", "delivered", 20.0, tip=2.0, courier_id="COU-0002",
                                  placed_at="2026-03-16T11:30", eta="2026-03-16T12:00", preparing_at="2026-03-16T11:33",
                                  picked_up_at="2026-03-16T11:50", delivered_at="2026-03-16T12:02")
    s.orders["FOD-0002"] = _order("FOD-0002", "FCU-0002", "RST-0003", "preparing", 23.0, placed_at="2026-03-16T19:10",
                                  eta="2026-03-16T19:45", preparing_at="2026-03-16T19:13")
    s.orders["FOD-0003"] = _order("FOD-0003", "FCU-0001", "RST-0003", "placed", 11.5, placed_at="2026-03-16T19:25",
                                  eta="2026-03-16T19:55")
    s.orders["FOD-0004"] = _order("FOD-0004", "FCU-0001", "RST-0001", "delivered", 30.0, placed_at="2026-03-10T19:00",
                                  eta="2026-03-10T19:30", delivered_at="2026-03-10T19:31")
    s.orders["FOD-0005"] = _order("FOD-0005", "FCU-0002", "RST-0001", "cancelled", 10.0, placed_at="2026-03-12T19:00",
                                  eta="2026-03-12T19:30", cancelled_at="2026-03-12T19:02", cancel_reason="changed_mind")
    s.baskets["FCU-0002"] = FoodBasket(customer_id="FCU-0002", restaurant_id="RST-0002",
                                       lines=[BasketLine(item_id="ITM-0004", quantity=1)])
    s.baskets["FCU-0003"] = FoodBasket(customer_id="FCU-0003", restaurant_id="RST-0001",
                                       lines=[BasketLine(item_id="ITM-0003", quantity=2)])
    return s


hub = hub_fixture(SERVER, tiny)


def test_seeded_world_is_deterministic_and_consistent() -> None:
    a = initial_state(5)
    assert state_hash(a) == state_hash(initial_state(5)) and state_hash(a) != state_hash(initial_state(6))
    assert len(a.restaurants) >= 20 and len(a.menu_items) >= 100 and len(a.orders) >= 40
    assert any(is_open(r, a.now) for r in a.restaurants.values())
    assert any(not is_open(r, a.now) for r in a.restaurants.values())
    for o in a.orders.values():
        assert o.customer_id in a.customers and o.restaurant_id in a.restaurants
        assert a.addresses[o.address_id].customer_id == o.customer_id
        assert o.courier_id is None or o.courier_id in a.couriers
        assert o.zone in a.restaurants[o.restaurant_id].delivery_zones
        assert all(ts is None or ts <= a.now for ts in (o.placed_at, o.preparing_at, o.picked_up_at, o.delivered_at))
    for b in a.baskets.values():
        assert all(a.menu_items[ln.item_id].restaurant_id == b.restaurant_id for ln in b.lines)
    assert a.new_id("FOD") == f"FOD-{len(a.orders) + 1:04d}"


def test_customers_and_addresses(hub: Hub) -> None:
    assert ok(hub, "search_food_customers", query="ada")["customers"][0]["customer_id"] == "FCU-0001"
    assert ok(hub, "search_food_customers", query="200-2002")["total"] == 1
    page = ok(hub, "search_food_customers", limit=2)
    assert page["next_offset"] == 2 and page["total"] == 3
    assert [a["address_id"] for a in ok(hub, "list_delivery_addresses", customer_id="FCU-0001")["addresses"]] == [
        "ADR-0001", "ADR-0002"]
    fails(hub, "list_delivery_addresses", "customer 'FCU-9' not found", "search_food_customers", customer_id="FCU-9")
    new = ok(hub, "add_delivery_address", customer_id="FCU-0001", label="Gym", street="9 Mill Lane", zone="midtown")
    assert new["address_id"] == "ADR-0005" and new["label"] == "gym"
    assert len(ok(hub, "list_delivery_addresses", customer_id="FCU-0001")["addresses"]) == 3
    fails(hub, "add_delivery_address", "already has an address labelled 'home'", "ADR-0001",
          customer_id="FCU-0001", label="home", street="5 Park Row", zone="harbor")
    fails(hub, "add_delivery_address", "zone", "'downtown'", customer_id="FCU-0001", label="x", street="5 Park Row",
          zone="suburbia")
    for label in ("a", "b"):
        ok(hub, "add_delivery_address", customer_id="FCU-0001", label=label, street="5 Park Row", zone="harbor")
    fails(hub, "add_delivery_address", "already has 5 addresses", customer_id="FCU-0001", label="c",
          street="5 Park Row", zone="harbor")


def test_restaurant_search_and_details(hub: Hub) -> None:
    res = ok(hub, "search_restaurants", open_now=True)
    assert [r["restaurant_id"] for r in res["restaurants"]] == ["RST-0003", "RST-0001"]  # by rating
    assert ok(hub, "search_restaurants", open_now=False)["restaurants"][0]["hours_note"] == "closed, opens at 11:00"
    assert ok(hub, "search_restaurants", cuisine="japanese")["total"] == 1
    assert {r["restaurant_id"] for r in ok(hub, "search_restaurants", delivers_to="midtown")["restaurants"]} == {
        "RST-0001", "RST-0002"}
    assert [r["restaurant_id"] for r in ok(hub, "search_restaurants", dietary=["vegan"])["restaurants"]] == ["RST-0003"]
    assert ok(hub, "search_restaurants", dietary=["vegetarian"], query="forno")["total"] == 1
    assert ok(hub, "search_restaurants", min_rating=4.6)["restaurants"][0]["name"] == "Sakura Sushi Bar"
    assert ok(hub, "search_restaurants", sort="delivery_fee")["restaurants"][0]["delivery_fee"] == 0.0
    page = ok(hub, "search_restaurants", sort="name", limit=2)
    assert page["next_offset"] == 2 and page["restaurants"][0]["name"] == "Forno Rosso"
    fails(hub, "search_restaurants", "cuisine", "'italian'", cuisine="french")
    assert ok(hub, "get_restaurant", restaurant_id="RST-0003")["hours_note"] == "open, closes at 02:00"
    assert ok(hub, "get_restaurant", restaurant_id="RST-0002")["open_now"] is False
    fails(hub, "get_restaurant", "restaurant 'RST-9' not found", "search_restaurants", restaurant_id="RST-9")
    menu = ok(hub, "get_restaurant_menu", restaurant_id="RST-0001")
    assert menu["total"] == 3 and menu["open_now"] is True
    assert ok(hub, "get_restaurant_menu", restaurant_id="RST-0001", available_only=True)["total"] == 2
    assert ok(hub, "get_restaurant_menu", restaurant_id="RST-0001", category="dessert")["items"][0]["name"] == "Tiramisu"
    assert ok(hub, "get_restaurant_menu", restaurant_id="RST-0001", max_price=11)["total"] == 2
    assert ok(hub, "get_restaurant_menu", restaurant_id="RST-0003", dietary=["vegan", "halal"])["total"] == 1
    fails(hub, "get_restaurant_menu", "dietary", "'gluten_free'", restaurant_id="RST-0001", dietary=["keto"])


def test_basket_add_and_remove(hub: Hub) -> None:
    assert ok(hub, "view_food_basket", customer_id="FCU-0001")["items"] == []
    b = ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0001", options=["large portion"])
    assert b["subtotal"] == 13.0 and b["short_of_minimum"] == 2.0 and b["total_before_tip"] == 15.0
    b = ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0001", quantity=2)
    assert [(i["quantity"], i["options"]) for i in b["items"]] == [(1, ["large portion"]), (2, [])]
    b = ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0001")
    assert b["items"][1]["quantity"] == 3 and b["subtotal"] == 43.0
    fails(hub, "add_item_to_food_basket", "already holds dishes from 'Forno Rosso'", "start_new_basket",
          customer_id="FCU-0001", item_id="ITM-0005")
    fails(hub, "add_item_to_food_basket", "closed now", "opens at 11:00", customer_id="FCU-0001", item_id="ITM-0004")
    fails(hub, "add_item_to_food_basket", "sold out", customer_id="FCU-0001", item_id="ITM-0003")
    fails(hub, "add_item_to_food_basket", "unknown option(s) 'extra cheese'", "large portion",
          customer_id="FCU-0001", item_id="ITM-0001", options=["extra cheese"])
    fails(hub, "add_item_to_food_basket", "menu item 'ITM-9' not found", "get_restaurant_menu",
          customer_id="FCU-0001", item_id="ITM-9")
    fails(hub, "remove_item_from_food_basket", "different options", customer_id="FCU-0001", item_id="ITM-0001",
          quantity=1)
    fails(hub, "remove_item_from_food_basket", "holds only 3", customer_id="FCU-0001", item_id="ITM-0001",
          quantity=5, options=[])
    b = ok(hub, "remove_item_from_food_basket", customer_id="FCU-0001", item_id="ITM-0001", quantity=2, options=[])
    assert b["subtotal"] == 23.0
    b = ok(hub, "remove_item_from_food_basket", customer_id="FCU-0001", item_id="ITM-0001", options=["large portion"])
    assert [i["quantity"] for i in b["items"]] == [1]
    fails(hub, "remove_item_from_food_basket", "not in the basket", "ITM-0001", customer_id="FCU-0001",
          item_id="ITM-0002")
    b = ok(hub, "remove_item_from_food_basket", customer_id="FCU-0001", item_id="ITM-0001")
    assert b["items"] == [] and "empty" in b["notice"]
    b = ok(hub, "add_item_to_food_basket", customer_id="FCU-0002", item_id="ITM-0005", start_new_basket=True)
    assert b["restaurant_name"] == "Spice Route" and "emptied the basket from 'Sakura Sushi Bar'" in b["notice"]
    assert ok(hub, "view_food_basket", customer_id="FCU-0002")["items"][0]["item_id"] == "ITM-0005"


def test_promos(hub: Hub) -> None:
    fails(hub, "apply_food_promo", "basket of customer 'FCU-0001' is empty", customer_id="FCU-0001", code="FREEDEL")
    ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0001", quantity=1)
    fails(hub, "apply_food_promo", "promo code 'NOPE' not found", "check the code", customer_id="FCU-0001", code="nope")
    fails(hub, "apply_food_promo", "expired on 2026-03-01", customer_id="FCU-0001", code="LUNCH10")
    fails(hub, "apply_food_promo", "not valid at 'Forno Rosso'", "Sakura Sushi Bar (RST-0002)",
          customer_id="FCU-0001", code="SUSHI15")
    fails(hub, "apply_food_promo", "at least 20.00", "10.00 short", customer_id="FCU-0001", code="PIZZA20")
    ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0001", quantity=1)
    b = ok(hub, "apply_food_promo", customer_id="FCU-0001", code="pizza20")
    assert b["promo_code"] == "PIZZA20" and b["discount"] == 4.0 and b["total_before_tip"] == 18.0
    fails(hub, "apply_food_promo", "already applied", customer_id="FCU-0001", code="PIZZA20")
    b = ok(hub, "remove_item_from_food_basket", customer_id="FCU-0001", item_id="ITM-0001", quantity=1)
    assert b["promo_code"] is None and "promo 'PIZZA20' removed" in b["notice"]
    b = ok(hub, "apply_food_promo", customer_id="FCU-0001", code="FREEDEL")
    assert b["discount"] == 2.0 and b["total_before_tip"] == 10.0


def test_place_order_failures(hub: Hub) -> None:
    fails(hub, "place_food_order", "is empty", "add_item_to_food_basket", customer_id="FCU-0001", address_id="ADR-0001")
    fails(hub, "place_food_order", "closed now", customer_id="FCU-0002", address_id="ADR-0003")
    fails(hub, "place_food_order", "sold out now", "Diavola Pizza", customer_id="FCU-0003", address_id="ADR-0004")
    ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0002", quantity=2)
    fails(hub, "place_food_order", "3.00 short of the minimum order of 15.00", customer_id="FCU-0001",
          address_id="ADR-0001")
    ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0001")
    fails(hub, "place_food_order", "zone 'harbor'", "delivers only to: downtown, midtown", customer_id="FCU-0001",
          address_id="ADR-0002")
    fails(hub, "place_food_order", "belongs to another customer", "ADR-0001, ADR-0002", customer_id="FCU-0001",
          address_id="ADR-0003")
    fails(hub, "place_food_order", "address 'ADR-77' not found", customer_id="FCU-0001", address_id="ADR-77")
    fails(hub, "place_food_order", "tip 12.00 is too large", "11.00", customer_id="FCU-0001", address_id="ADR-0001",
          tip=12.0)
    fails(hub, "place_food_order", "payment_method", "'card'", customer_id="FCU-0001", address_id="ADR-0001",
          payment_method="bitcoin")


def test_place_track_and_cancel(hub: Hub) -> None:
    ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0001", quantity=2)
    ok(hub, "apply_food_promo", customer_id="FCU-0001", code="PIZZA20")
    order = ok(hub, "place_food_order", customer_id="FCU-0001", address_id="ADR-0001", tip=3.0, payment_method="wallet")
    assert order["order_id"] == "FOD-0006" and order["status"] == "placed" and order["courier_id"] == "COU-0001"
    assert order["total"] == 20.0 - 4.0 + 2.0 + 3.0 and order["eta"] == "2026-03-16T19:58"
    assert ok(hub, "view_food_basket", customer_id="FCU-0001")["items"] == []
    mine = ok(hub, "list_food_orders", customer_id="FCU-0001")
    assert [o["order_id"] for o in mine["orders"]][:2] == ["FOD-0006", "FOD-0004"] and mine["total"] == 4
    assert ok(hub, "list_food_orders", status="placed")["total"] == 2
    assert ok(hub, "list_food_orders", restaurant_id="RST-0003", limit=1)["next_offset"] == 1
    fails(hub, "list_food_orders", "restaurant 'RST-8' not found", restaurant_id="RST-8")
    assert ok(hub, "get_food_order", order_id="FOD-0006")["promo_code"] == "PIZZA20"
    fails(hub, "get_food_order", "order 'FOD-99' not found", "list_food_orders", order_id="FOD-99")
    track = ok(hub, "track_food_order", order_id="FOD-0006")
    assert track["courier"]["name"] == "Cai Rider" and track["minutes_until_eta"] == 27
    assert track["delivery_address"] == "1 Oak Street (downtown)"
    cancelled = ok(hub, "cancel_food_order", order_id="FOD-0006", reason="ordered_by_mistake")
    assert cancelled["status"] == "cancelled" and cancelled["refund_amount"] == 21.0
    track = ok(hub, "track_food_order", order_id="FOD-0006")
    assert track["events"][-1]["event"] == "cancelled (ordered_by_mistake)" and track["minutes_until_eta"] is None
    fails(hub, "cancel_food_order", "already cancelled", order_id="FOD-0006", reason="changed_mind")
    fails(hub, "cancel_food_order", "it is preparing", "preparation started at 2026-03-16T19:13",
          order_id="FOD-0002", reason="taking_too_long")
    fails(hub, "cancel_food_order", "it is delivered", order_id="FOD-0001", reason="changed_mind")
    fails(hub, "cancel_food_order", "reason", "'changed_mind'", order_id="FOD-0003", reason="bored")
    # the courier is free again and takes the next order
    ok(hub, "add_item_to_food_basket", customer_id="FCU-0002", item_id="ITM-0005", start_new_basket=True)
    assert ok(hub, "place_food_order", customer_id="FCU-0002", address_id="ADR-0003")["courier_id"] == "COU-0001"
    ok(hub, "add_item_to_food_basket", customer_id="FCU-0001", item_id="ITM-0005")
    assert ok(hub, "place_food_order", customer_id="FCU-0001", address_id="ADR-0001")["courier_id"] is None


def test_tips(hub: Hub) -> None:
    o = ok(hub, "add_delivery_tip", order_id="FOD-0001", amount=5.0)
    assert o["tip"] == 7.0 and o["total"] == 29.0
    assert ok(hub, "get_food_order", order_id="FOD-0001")["tip"] == 7.0
    fails(hub, "add_delivery_tip", "too large", "at most 10.00", "7.00 already given", "3.00 more",
          order_id="FOD-0001", amount=4.0)
    fails(hub, "add_delivery_tip", "only until 2026-03-11T19:31", order_id="FOD-0004", amount=1.0)
    fails(hub, "add_delivery_tip", "is cancelled", order_id="FOD-0005", amount=1.0)
    fails(hub, "add_delivery_tip", "amount", "greater than 0", order_id="FOD-0003", amount=0)
    assert ok(hub, "add_delivery_tip", order_id="FOD-0003", amount=1.5)["tip"] == 1.5


def test_ratings(hub: Hub) -> None:
    fails(hub, "rate_food_order", "is preparing", "only delivered", order_id="FOD-0002", food_stars=5)
    fails(hub, "rate_food_order", "is cancelled", order_id="FOD-0005", food_stars=5)
    fails(hub, "rate_food_order", "no courier to rate", order_id="FOD-0004", food_stars=5, courier_stars=4)
    fails(hub, "rate_food_order", "food_stars", "less than or equal to 5", order_id="FOD-0001", food_stars=6)
    got = ok(hub, "rate_food_order", order_id="FOD-0001", food_stars=5, courier_stars=3, comment="Hot and fresh")
    assert got["rating"]["rating_id"] == "RAT-0001" and got["restaurant_rating"] == 4.2
    assert got["restaurant_rating_count"] == 5
    assert ok(hub, "get_restaurant", restaurant_id="RST-0001")["rating"] == 4.2
    assert ok(hub, "get_food_order", order_id="FOD-0001")["rating_id"] == "RAT-0001"
    assert ok(hub, "track_food_order", order_id="FOD-0001")["courier"]["rating"] == 4.84
    fails(hub, "rate_food_order", "already rated (RAT-0001)", order_id="FOD-0001", food_stars=1)


def test_delivery_addresses_and_restaurants_page(hub: Hub) -> None:
    ok(hub, "add_delivery_address", customer_id="FCU-0001", label="gym", street="9 Mill Lane", zone="midtown")
    first = ok(hub, "list_delivery_addresses", customer_id="FCU-0001", limit=2)
    assert first["total"] == 3 and first["next_offset"] == 2
    second = ok(hub, "list_delivery_addresses", customer_id="FCU-0001", offset=first["next_offset"], limit=2)
    assert second["total"] == 3 and second["next_offset"] is None
    assert [a["address_id"] for a in first["addresses"] + second["addresses"]] == ["ADR-0001", "ADR-0002", "ADR-0005"]
    assert ok(hub, "search_restaurants")["total"] == 3 and ok(hub, "search_restaurants")["next_offset"] is None


def test_seeded_world_through_the_hub() -> None:
    hub = Hub.for_state(SERVER, initial_state(3))
    hub.open("s", seed=3)

    def call(tool: str, /, **args):
        out = hub.call(tool, args, episode_id="s")
        assert out["ok"], out
        return out["result"]

    cust = call("search_food_customers", limit=1)["customers"][0]["customer_id"]
    addr = call("list_delivery_addresses", customer_id=cust)["addresses"][0]
    rest = call("search_restaurants", open_now=True, delivers_to=addr["zone"], limit=50)["restaurants"]
    if not rest:
        pytest.skip("no open restaurant delivers to this address in seed 3")
    rid = rest[0]["restaurant_id"]
    item = call("get_restaurant_menu", restaurant_id=rid, available_only=True)["items"][0]
    qty = int(rest[0]["min_order"] // item["price"]) + 1
    call("add_item_to_food_basket", customer_id=cust, item_id=item["item_id"], quantity=qty, start_new_basket=True)
    order = call("place_food_order", customer_id=cust, address_id=addr["address_id"])
    assert call("list_food_orders", customer_id=cust)["orders"][0]["order_id"] == order["order_id"]
