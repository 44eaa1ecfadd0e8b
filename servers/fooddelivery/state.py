"""Food delivery server state: customers, addresses, restaurants, menus, baskets, orders, couriers."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, entity_id, entity_ids, naming
from prove.env.world import STREETS, days_before, email, person, phone, shift

Cuisine = Literal["italian", "japanese", "indian", "mexican", "thai", "american", "mediterranean", "chinese"]
Zone = Literal["downtown", "midtown", "old_town", "riverside", "harbor", "university", "northside", "west_end"]
DietaryTag = Literal["vegan", "vegetarian", "gluten_free", "halal"]
MenuCategory = Literal["starter", "main", "side", "dessert", "drink"]
FoodOrderStatus = Literal["placed", "preparing", "out_for_delivery", "delivered", "cancelled"]
CourierStatus = Literal["available", "delivering", "off_shift"]
Vehicle = Literal["bike", "scooter", "car"]
PromoKind = Literal["percent", "fixed", "free_delivery"]
PaymentMethod = Literal["card", "cash", "wallet"]
FoodCancelReason = Literal["changed_mind", "ordered_by_mistake", "taking_too_long", "wrong_address"]
RestaurantSort = Literal["rating", "delivery_fee", "name"]

ZONES: tuple[str, ...] = ("downtown", "midtown", "old_town", "riverside", "harbor", "university", "northside", "west_end")
TIP_CAP_SHARE = 0.5
"""Tips on an order may add up to at most this share of its subtotal."""
TIP_WINDOW_HOURS = 24
"""Tips can be added until this many hours after delivery."""
MAX_ADDRESSES = 5

CustomerId = entity_id("customer", "Food delivery customer id, e.g. 'FCU-0004'.", example="FCU-0004")
AddressId = entity_id("delivery_address", "Saved delivery address id, e.g. 'ADR-0003'.", example="ADR-0003")
RestaurantId = entity_id("restaurant", "Restaurant id, e.g. 'RST-0007'.", example="RST-0007")
ItemId = entity_id("menu_item", "Menu item id, e.g. 'ITM-0031'.", example="ITM-0031")
OrderId = entity_id("order", "Food order id, e.g. 'FOD-0042'.", example="FOD-0042")
CourierId = entity_id("courier", "Courier id, e.g. 'COU-0003'.", example="COU-0003")
RatingId = entity_id("rating", "Food order rating id, e.g. 'RAT-0005'.", example="RAT-0005")
PromoCodeName = entity_id("promo_code", "Promo code, e.g. 'FREEDEL'.", example="FREEDEL")


class FoodCustomer(Record):
    customer_id: CustomerId
    name: str = Field(json_schema_extra=naming("alone"))
    phone: str
    email: str
    member_since: str


class DeliveryAddress(Record):
    address_id: AddressId
    customer_id: CustomerId
    label: str = Field(json_schema_extra=naming("title"), description="Customer's name for the address, e.g. 'home'.")
    street: str
    zone: Zone
    instructions: str = ""


class Restaurant(Record):
    restaurant_id: RestaurantId
    name: str = Field(json_schema_extra=naming("name"))
    cuisine: Cuisine
    zone: Zone = Field(description="Zone the kitchen is in.")
    delivery_zones: list[Zone] = Field(description="Zones it delivers to (sorted).")
    rating: float = Field(description="Average food rating, 1-5.")
    rating_count: int
    opens_at: str = Field(description="Daily opening time, HH:MM.")
    closes_at: str = Field(description="Daily closing time, HH:MM; earlier than opens_at means after midnight.")
    accepting_orders: bool = Field(description="False while the restaurant has paused orders.")
    delivery_fee: float = Field(json_schema_extra={MONEY: True})
    min_order: float = Field(description="Smallest basket subtotal it accepts.")
    prep_minutes: int


class ItemOption(Record):
    name: str = Field(json_schema_extra=naming("name"))
    extra_price: float = Field(json_schema_extra={MONEY: True})


class MenuItem(Record):
    item_id: ItemId
    restaurant_id: RestaurantId
    name: str = Field(json_schema_extra=naming("name"))
    category: MenuCategory
    price: float = Field(json_schema_extra={MONEY: True})
    dietary_tags: list[DietaryTag] = Field(default_factory=list)
    available: bool = True
    options: list[ItemOption] = Field(default_factory=list)


class BasketLine(Record):
    item_id: ItemId
    quantity: int
    options: list[str] = Field(default_factory=list, description="Chosen option names (sorted).")


class FoodBasket(Record):
    customer_id: CustomerId
    restaurant_id: RestaurantId
    lines: list[BasketLine] = Field(default_factory=list)
    promo_code: PromoCodeName | None = None


class FoodOrderLine(Record):
    item_id: ItemId
    name: str = Field(json_schema_extra=naming("name"))
    quantity: int
    options: list[str] = Field(default_factory=list)
    unit_price: float = Field(json_schema_extra={MONEY: True}, description="Item price plus its options.")


class FoodOrder(Record):
    order_id: OrderId
    customer_id: CustomerId
    restaurant_id: RestaurantId
    address_id: AddressId
    zone: Zone
    lines: list[FoodOrderLine]
    subtotal: float = Field(json_schema_extra={MONEY: True})
    delivery_fee: float = Field(json_schema_extra={MONEY: True})
    discount: float = 0.0
    promo_code: PromoCodeName | None = None
    tip: float = 0.0
    total: float = Field(json_schema_extra={MONEY: True}, description="subtotal - discount + delivery_fee + tip.")
    payment_method: PaymentMethod
    status: FoodOrderStatus
    courier_id: CourierId | None = None
    placed_at: str
    eta: str = Field(description="Estimated (or actual) delivery time.")
    preparing_at: str | None = None
    picked_up_at: str | None = None
    delivered_at: str | None = None
    cancelled_at: str | None = None
    cancel_reason: FoodCancelReason | None = None
    refund_amount: float = Field(0.0, json_schema_extra={MONEY: True})
    rating_id: RatingId | None = None


class Courier(Record):
    courier_id: CourierId
    name: str = Field(json_schema_extra=naming("alone"))
    phone: str
    vehicle: Vehicle
    zone: Zone
    status: CourierStatus
    rating: float
    rating_count: int


class PromoCode(Record):
    code: PromoCodeName
    description: str
    kind: PromoKind
    value: float = Field(description="Percent off, amount off, or 0 for free delivery.")
    min_subtotal: float = Field(json_schema_extra={MONEY: True})
    expires_on: str
    restaurant_ids: entity_ids("restaurant", "Valid only here (sorted); empty = everywhere.") = Field(
        default_factory=list)


class FoodRating(Record):
    rating_id: RatingId
    order_id: OrderId
    restaurant_id: RestaurantId
    courier_id: CourierId | None
    food_stars: int
    courier_stars: int | None
    comment: str
    created_at: str


class FoodState(ServerState):
    customers: dict[str, FoodCustomer] = Field(default_factory=dict)
    addresses: dict[str, DeliveryAddress] = Field(default_factory=dict)
    restaurants: dict[str, Restaurant] = Field(default_factory=dict)
    menu_items: dict[str, MenuItem] = Field(default_factory=dict)
    baskets: dict[str, FoodBasket] = Field(default_factory=dict, description="Open baskets by customer id.")
    orders: dict[str, FoodOrder] = Field(default_factory=dict)
    couriers: dict[str, Courier] = Field(default_factory=dict)
    promos: dict[str, PromoCode] = Field(default_factory=dict)
    ratings: dict[str, FoodRating] = Field(default_factory=dict)


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def is_open(restaurant: Restaurant, now: str) -> bool:
    """Whether a restaurant takes orders at `now` (its hours may run past midnight)."""
    if not restaurant.accepting_orders:
        return False
    m, o, c = _minutes(now[11:16]), _minutes(restaurant.opens_at), _minutes(restaurant.closes_at)
    return o <= m < c if o < c else (m >= o or m < c)


def travel_minutes(restaurant: Restaurant, zone: str) -> int:
    """Courier ride time from the kitchen to a delivery zone."""
    return 12 if zone == restaurant.zone else 22


def unit_price(item: MenuItem, options: list[str]) -> float:
    extras = {o.name: o.extra_price for o in item.options}
    return round(item.price + sum(extras[o] for o in options), 2)


def promo_discount(promo: PromoCode, subtotal: float, delivery_fee: float) -> float:
    """What a promo takes off an order (never more than it applies to)."""
    if promo.kind == "free_delivery":
        return delivery_fee
    off = subtotal * promo.value / 100 if promo.kind == "percent" else promo.value
    return round(min(off, subtotal), 2)


_HOURS = (("11:00", "22:00"), ("11:30", "22:30"), ("17:00", "23:00"), ("18:00", "02:00"),
          ("11:00", "15:00"), ("07:00", "16:00"), ("12:00", "21:00"))

_V, _VG, _GF, _H = "vegan", "vegetarian", "gluten_free", "halal"
_MENUS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str, float, tuple[str, ...]], ...]]] = {
    "italian": (("Trattoria Nonna", "Forno Rosso", "Pasta Lab"), (
        ("Bruschetta", "starter", 6.5, (_V,)), ("Margherita Pizza", "main", 11.0, (_VG,)),
        ("Diavola Pizza", "main", 13.5, ()), ("Spaghetti Carbonara", "main", 14.0, ()),
        ("Penne Arrabbiata", "main", 12.0, (_V,)), ("Risotto ai Funghi", "main", 15.5, (_VG, _GF)),
        ("Caprese Salad", "side", 7.5, (_VG, _GF)), ("Tiramisu", "dessert", 6.0, (_VG,)),
        ("San Pellegrino", "drink", 3.0, (_V, _GF)))),
    "japanese": (("Sakura Sushi Bar", "Ramen Kaze", "Tokyo Bento"), (
        ("Edamame", "starter", 4.5, (_V, _GF)), ("Gyoza (6)", "starter", 6.5, ()),
        ("Salmon Nigiri Set", "main", 16.0, (_GF,)), ("Tonkotsu Ramen", "main", 14.5, ()),
        ("Vegetable Ramen", "main", 13.0, (_V,)), ("Chicken Katsu Curry", "main", 13.5, ()),
        ("Avocado Maki", "side", 5.5, (_V, _GF)), ("Mochi Ice Cream", "dessert", 5.0, (_VG, _GF)),
        ("Green Tea", "drink", 2.5, (_V, _GF)))),
    "indian": (("Spice Route", "Tandoor House", "Bombay Bites"), (
        ("Vegetable Samosa", "starter", 5.0, (_V, _H)), ("Chicken Tikka Masala", "main", 14.0, (_H, _GF)),
        ("Lamb Rogan Josh", "main", 16.5, (_H, _GF)), ("Chana Masala", "main", 11.5, (_V, _GF, _H)),
        ("Palak Paneer", "main", 12.5, (_VG, _GF, _H)), ("Garlic Naan", "side", 3.5, (_VG, _H)),
        ("Basmati Rice", "side", 3.0, (_V, _GF, _H)), ("Gulab Jamun", "dessert", 4.5, (_VG, _H)),
        ("Mango Lassi", "drink", 4.0, (_VG, _GF, _H)))),
    "mexican": (("Casa Verde", "Taco Loco", "El Fuego"), (
        ("Nachos", "starter", 7.5, (_VG, _GF)), ("Chicken Burrito", "main", 12.0, ()),
        ("Beef Tacos (3)", "main", 11.5, (_GF,)), ("Black Bean Bowl", "main", 10.5, (_V, _GF)),
        ("Quesadilla", "main", 10.0, (_VG,)), ("Guacamole & Chips", "side", 5.5, (_V, _GF)),
        ("Churros", "dessert", 5.0, (_VG,)), ("Horchata", "drink", 3.5, (_VG, _GF)))),
    "thai": (("Bangkok Street", "Lotus Thai", "Chili Basil"), (
        ("Spring Rolls", "starter", 5.5, (_V,)), ("Pad Thai", "main", 13.0, (_GF,)),
        ("Green Curry", "main", 13.5, (_GF,)), ("Tofu Massaman", "main", 12.5, (_V, _GF)),
        ("Basil Chicken", "main", 12.0, (_GF, _H)), ("Jasmine Rice", "side", 2.5, (_V, _GF, _H)),
        ("Mango Sticky Rice", "dessert", 6.0, (_V, _GF)), ("Thai Iced Tea", "drink", 3.5, (_VG, _GF)))),
    "american": (("Liberty Burgers", "Smokehouse 88", "Diner Deluxe"), (
        ("Buffalo Wings", "starter", 8.5, (_GF,)), ("Classic Cheeseburger", "main", 12.5, ()),
        ("Beyond Burger", "main", 13.5, (_V,)), ("BBQ Ribs", "main", 18.0, (_GF,)),
        ("Fried Chicken Basket", "main", 13.0, ()), ("Fries", "side", 3.5, (_V, _GF)),
        ("Mac & Cheese", "side", 5.0, (_VG,)), ("Brownie", "dessert", 4.5, (_VG,)),
        ("Milkshake", "drink", 5.0, (_VG, _GF)))),
    "mediterranean": (("Olive & Vine", "Falafel Corner", "Aegean Grill"), (
        ("Hummus & Pita", "starter", 6.0, (_V, _H)), ("Falafel Wrap", "main", 9.5, (_V, _H)),
        ("Chicken Shawarma Plate", "main", 13.5, (_H, _GF)), ("Lamb Kofta", "main", 15.0, (_H, _GF)),
        ("Greek Salad", "side", 7.0, (_VG, _GF)), ("Tabbouleh", "side", 5.5, (_V, _H)),
        ("Baklava", "dessert", 4.5, (_VG,)), ("Mint Lemonade", "drink", 3.5, (_V, _GF, _H)))),
    "chinese": (("Golden Dragon", "Dumpling Hall", "Sichuan Garden"), (
        ("Pork Dumplings (8)", "starter", 7.0, ()), ("Hot and Sour Soup", "starter", 5.0, ()),
        ("Kung Pao Chicken", "main", 13.0, ()), ("Mapo Tofu", "main", 11.5, (_V,)),
        ("Beef with Broccoli", "main", 14.0, (_GF,)), ("Egg Fried Rice", "side", 4.0, (_VG,)),
        ("Sesame Balls", "dessert", 4.0, (_V,)), ("Jasmine Tea", "drink", 2.5, (_V, _GF)))),
}

_OPTIONS: dict[str, tuple[tuple[str, float], ...]] = {
    "starter": (("extra dip", 0.9), ("double portion", 4.0)),
    "main": (("large portion", 3.0), ("extra sauce", 0.8), ("no onions", 0.0), ("extra spicy", 0.0)),
    "side": (("large", 1.5),),
    "dessert": (("extra scoop of ice cream", 1.8),),
    "drink": (("large", 1.0), ("no ice", 0.0)),
}

_NEIGHBOURS: dict[str, tuple[str, ...]] = {
    "downtown": ("midtown", "old_town", "harbor"), "midtown": ("downtown", "university", "northside"),
    "old_town": ("downtown", "riverside"), "riverside": ("old_town", "west_end"),
    "harbor": ("downtown", "west_end"), "university": ("midtown", "northside"),
    "northside": ("midtown", "university"), "west_end": ("riverside", "harbor"),
}

_LABELS = ("home", "work", "partner", "gym", "parents")


def initial_state(seed: int) -> FoodState:
    """A city with ~24 restaurants, ~170 menu items, ~30 customers and ~55 orders; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-03-16T19:30"
    state = FoodState(now=now)
    cus_id, adr_id, rst_id, itm_id = Counter("FCU"), Counter("ADR"), Counter("RST"), Counter("ITM")
    ord_id, cou_id, rat_id = Counter("FOD"), Counter("COU"), Counter("RAT")
    for cuisine, (names, dishes) in _MENUS.items():
        for name in names:
            rid = rst_id()
            zone = rng.choice(ZONES)
            reach = [zone, *rng.sample(_NEIGHBOURS[zone], rng.randrange(1, len(_NEIGHBOURS[zone]) + 1))]
            opens, closes = rng.choice(_HOURS)
            state.restaurants[rid] = Restaurant(
                restaurant_id=rid, name=name, cuisine=cuisine, zone=zone,
                delivery_zones=sorted(reach), rating=round(rng.uniform(3.4, 4.9), 1),
                rating_count=rng.randrange(20, 900), opens_at=opens, closes_at=closes,
                accepting_orders=rng.random() > 0.1, delivery_fee=rng.choice([0.0, 1.49, 1.99, 2.49, 2.99, 3.99]),
                min_order=rng.choice([10.0, 12.0, 15.0, 20.0, 25.0]), prep_minutes=rng.choice([10, 15, 20, 25, 30]),
            )
            for dish, category, base, tags in rng.sample(dishes, rng.randrange(len(dishes) - 3, len(dishes))):
                iid = itm_id()
                pool = _OPTIONS[category]
                state.menu_items[iid] = MenuItem(
                    item_id=iid, restaurant_id=rid, name=dish, category=category,
                    price=round(base + rng.choice([-0.5, 0.0, 0.0, 0.5, 1.0]), 2),
                    dietary_tags=sorted(tags), available=rng.random() > 0.08,
                    options=[ItemOption(name=n, extra_price=p) for n, p in rng.sample(pool, rng.randrange(0, len(pool) + 1))],
                )
    for _ in range(rng.randrange(10, 15)):
        cid = cou_id()
        state.couriers[cid] = Courier(
            courier_id=cid, name=person(rng), phone=phone(rng), vehicle=rng.choice(["bike", "scooter", "car"]),
            zone=rng.choice(ZONES), status=rng.choices(["available", "off_shift"], weights=[3, 1])[0],
            rating=round(rng.uniform(4.0, 5.0), 1), rating_count=rng.randrange(10, 500),
        )
    for _ in range(rng.randrange(26, 34)):
        name = person(rng)
        cid = cus_id()
        state.customers[cid] = FoodCustomer(customer_id=cid, name=name, phone=phone(rng),
                                            email=email(name, "mail.example.com"),
                                            member_since=days_before(now, rng, 1500, 30)[:10])
        for label in rng.sample(_LABELS, rng.randrange(1, 4)):
            aid = adr_id()
            state.addresses[aid] = DeliveryAddress(
                address_id=aid, customer_id=cid, label=label, zone=rng.choice(ZONES),
                street=f"{rng.randrange(1, 200)} {rng.choice(STREETS)}",
                instructions=rng.choice(["", "", "ring twice", "leave at the door", "call on arrival", "3rd floor"]),
            )
    italian = sorted(r.restaurant_id for r in state.restaurants.values() if r.cuisine == "italian")
    japanese = sorted(r.restaurant_id for r in state.restaurants.values() if r.cuisine == "japanese")
    for code, desc, kind, value, min_sub, expires, where in (
        ("WELCOME5", "5.00 off any order from 15.00", "fixed", 5.0, 15.0, "2026-12-31", []),
        ("FREEDEL", "free delivery on orders from 10.00", "free_delivery", 0.0, 10.0, "2026-04-30", []),
        ("PIZZA20", "20% off at Italian restaurants from 20.00", "percent", 20.0, 20.0, "2026-06-30", italian),
        ("SUSHI15", "15% off at Japanese restaurants", "percent", 15.0, 0.0, "2026-05-31", japanese),
        ("BIGFEAST", "12.00 off orders from 60.00", "fixed", 12.0, 60.0, "2026-09-30", []),
        ("LUNCH10", "10% off lunch orders (winter promo)", "percent", 10.0, 0.0, "2026-03-01", []),
        ("NEWYEAR25", "25% off (new year)", "percent", 25.0, 25.0, "2026-01-15", []),
    ):
        state.promos[code] = PromoCode(code=code, description=desc, kind=kind, value=value,
                                       min_subtotal=min_sub, expires_on=expires, restaurant_ids=where)
    by_restaurant: dict[str, list[MenuItem]] = {}
    for item in state.menu_items.values():
        by_restaurant.setdefault(item.restaurant_id, []).append(item)
    customers, restaurants = list(state.customers), list(state.restaurants.values())
    addresses: dict[str, list[DeliveryAddress]] = {}
    for a in state.addresses.values():
        addresses.setdefault(a.customer_id, []).append(a)
    orders: list[FoodOrder] = []
    for _ in range(rng.randrange(50, 64)):
        cid = rng.choice(customers)
        addr = rng.choice(addresses[cid])
        rest = rng.choice([r for r in restaurants if addr.zone in r.delivery_zones] or restaurants)
        lines = []
        for item in rng.sample(by_restaurant[rest.restaurant_id], rng.randrange(1, 4)):
            opts = sorted(o.name for o in item.options[: rng.randrange(0, len(item.options) + 1)])
            lines.append(FoodOrderLine(item_id=item.item_id, name=item.name, quantity=rng.randrange(1, 3),
                                       options=opts, unit_price=unit_price(item, opts)))
        subtotal = round(sum(ln.unit_price * ln.quantity for ln in lines), 2)
        recent = rng.random() < 0.12
        ago = rng.randrange(5, 55) if recent else rng.randrange(1440, 60 * 1440)
        placed = shift(now, minutes=-ago)
        eta = shift(placed, minutes=rest.prep_minutes + travel_minutes(rest, addr.zone))
        status: FoodOrderStatus
        if recent:
            status = rng.choice(["placed", "preparing", "out_for_delivery"])
        else:
            status = rng.choices(["delivered", "cancelled"], weights=[9, 1])[0]
        tip = 0.0 if status == "cancelled" else rng.choice([0.0, 0.0, 1.0, 2.0, 3.0, 5.0])
        courier = None
        if status == "delivered":
            courier = rng.choice(list(state.couriers))
        elif status == "out_for_delivery" or (status == "preparing" and rng.random() < 0.5):
            free = [c.courier_id for c in state.couriers.values() if c.status == "available"]
            if free:
                courier = rng.choice(free)
                state.couriers[courier].status = "delivering"
        order = FoodOrder(
            order_id="", customer_id=cid, restaurant_id=rest.restaurant_id, address_id=addr.address_id,
            zone=addr.zone, lines=lines, subtotal=subtotal, delivery_fee=rest.delivery_fee, tip=tip,
            total=round(subtotal + rest.delivery_fee + tip, 2), payment_method=rng.choice(["card", "card", "wallet", "cash"]),
            status=status, courier_id=courier, placed_at=placed, eta=eta,
        )
        if status != "placed" and status != "cancelled":
            order.preparing_at = shift(placed, minutes=3)
        if status in ("out_for_delivery", "delivered"):
            order.picked_up_at = shift(placed, minutes=min(rest.prep_minutes + 2, ago - 1))
        if status == "delivered":
            order.delivered_at = shift(eta, minutes=rng.randrange(-5, 15))
        if status == "cancelled":
            order.cancelled_at = shift(placed, minutes=2)
            order.cancel_reason = rng.choice(["changed_mind", "ordered_by_mistake", "taking_too_long"])
            order.refund_amount = order.total
        orders.append(order)
    for order in sorted(orders, key=lambda o: o.placed_at):
        order.order_id = ord_id()
        state.orders[order.order_id] = order
        if order.status == "delivered" and rng.random() < 0.45:
            rid = rat_id()
            order.rating_id = rid
            stars = rng.choices([1, 2, 3, 4, 5], weights=[1, 1, 2, 4, 6])[0]
            state.ratings[rid] = FoodRating(
                rating_id=rid, order_id=order.order_id, restaurant_id=order.restaurant_id,
                courier_id=order.courier_id, food_stars=stars, courier_stars=rng.choice([None, 4, 5]),
                comment=rng.choice(["", "Great, still hot!", "Took a while", "Missing a drink", "Tasty as always"]),
                created_at=shift(order.delivered_at or order.eta, minutes=30),
            )
    for cid in rng.sample(customers, 4):
        rest = rng.choice(restaurants)
        items = [i for i in by_restaurant[rest.restaurant_id] if i.available]
        if not items:
            continue
        state.baskets[cid] = FoodBasket(customer_id=cid, restaurant_id=rest.restaurant_id, lines=[
            BasketLine(item_id=i.item_id, quantity=rng.randrange(1, 3)) for i in rng.sample(items, min(2, len(items)))
        ])
    return state
