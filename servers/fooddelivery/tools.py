"""Food delivery tools: restaurants and menus, baskets, promos, orders, tracking, tips, ratings."""

from __future__ import annotations

from datetime import datetime
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
    measure,
    naming,
    text,
)
from prove.env.world import shift
from prove_servers.fooddelivery.state import (
    MAX_ADDRESSES,
    TIP_CAP_SHARE,
    TIP_WINDOW_HOURS,
    BasketLine,
    Courier,
    Cuisine,
    CustomerId,
    DeliveryAddress,
    DietaryTag,
    FoodBasket,
    FoodCancelReason,
    FoodCustomer,
    FoodOrder,
    FoodOrderLine,
    FoodOrderStatus,
    FoodRating,
    FoodState,
    ItemId,
    MenuCategory,
    MenuItem,
    OrderId,
    PaymentMethod,
    PromoCode,
    PromoCodeName,
    Restaurant,
    RestaurantId,
    RestaurantSort,
    Zone,
    is_open,
    promo_discount,
    travel_minutes,
    unit_price,
)


class RestaurantView(Restaurant):
    open_now: bool = Field(description="Whether it takes orders right now.")
    hours_note: str = Field(description="Today's hours relative to now, e.g. 'closes at 22:00'.")


class RestaurantList(Page):
    restaurants: list[RestaurantView]


class MenuView(Page):
    restaurant_id: RestaurantId
    restaurant_name: str
    open_now: bool
    items: list[MenuItem]


class FoodCustomerList(Page):
    customers: list[FoodCustomer]


class AddressList(Page):
    customer_id: CustomerId
    addresses: list[DeliveryAddress]


class BasketItem(BaseModel):
    item_id: ItemId
    name: str = Field(json_schema_extra=naming("name"))
    quantity: int
    options: list[str]
    unit_price: float = Field(json_schema_extra={MONEY: True})
    line_total: float = Field(json_schema_extra={MONEY: True})
    available: bool


class BasketView(BaseModel):
    customer_id: CustomerId
    restaurant_id: RestaurantId | None
    restaurant_name: str | None
    items: list[BasketItem]
    promo_code: PromoCodeName | None
    subtotal: float = Field(json_schema_extra={MONEY: True})
    discount: float
    delivery_fee: float = Field(json_schema_extra={MONEY: True})
    total_before_tip: float = Field(json_schema_extra={MONEY: True})
    min_order: float
    short_of_minimum: float = Field(description="How much more the subtotal needs to reach the minimum order.")
    notice: str = Field("", description="What changed as a side effect, e.g. a promo removed.")


class FoodOrderList(Page):
    orders: list[FoodOrder]


class TrackingEvent(BaseModel):
    timestamp: str
    event: str


class FoodOrderTracking(BaseModel):
    order_id: OrderId
    status: FoodOrderStatus
    restaurant_name: str
    delivery_address: str
    courier: Courier | None
    eta: str
    minutes_until_eta: int | None = Field(description="None once delivered or cancelled.")
    events: list[TrackingEvent]


class RatingReceipt(BaseModel):
    rating: FoodRating
    restaurant_rating: float
    restaurant_rating_count: int


def _customer(state: FoodState, customer_id: str) -> FoodCustomer:
    return find(state.customers, customer_id, hint="use search_food_customers to find a customer id")


def _restaurant(state: FoodState, restaurant_id: str) -> Restaurant:
    return find(state.restaurants, restaurant_id, hint="use search_restaurants to find a restaurant id")


def _order(state: FoodState, order_id: str) -> FoodOrder:
    return find(state.orders, order_id, hint="use list_food_orders to find an order id")


def _view(state: FoodState, r: Restaurant) -> RestaurantView:
    open_now = is_open(r, state.now)
    if not r.accepting_orders:
        note = "orders paused by the restaurant"
    elif open_now:
        note = f"open, closes at {r.closes_at}"
    else:
        note = f"closed, opens at {r.opens_at}"
    return RestaurantView(**r.model_dump(), open_now=open_now, hours_note=note)


def _require_open(state: FoodState, r: Restaurant) -> None:
    require(is_open(r, state.now), f"restaurant '{r.name}' ({r.restaurant_id}) is closed now "
            f"({state.now[11:16]}): {_view(state, r).hours_note}; hours {r.opens_at}-{r.closes_at}",
            reason='state', rejected=(r.name, _view(state, r).hours_note, r.opens_at, r.closes_at))


def _subtotal(state: FoodState, basket: FoodBasket) -> float:
    return round(sum(unit_price(state.menu_items[ln.item_id], ln.options) * ln.quantity
                     for ln in basket.lines), 2)


def _basket_view(state: FoodState, customer_id: str, notice: str = "") -> BasketView:
    basket = state.baskets.get(customer_id)
    if basket is None:
        return BasketView(customer_id=customer_id, restaurant_id=None, restaurant_name=None, items=[],
                          promo_code=None, subtotal=0.0, discount=0.0, delivery_fee=0.0,
                          total_before_tip=0.0, min_order=0.0, short_of_minimum=0.0, notice=notice)
    r = state.restaurants[basket.restaurant_id]
    items = []
    for ln in basket.lines:
        item = state.menu_items[ln.item_id]
        price = unit_price(item, ln.options)
        items.append(BasketItem(item_id=item.item_id, name=item.name, quantity=ln.quantity, options=ln.options,
                                unit_price=price, line_total=round(price * ln.quantity, 2), available=item.available))
    subtotal = _subtotal(state, basket)
    promo = state.promos.get(basket.promo_code) if basket.promo_code else None
    discount = promo_discount(promo, subtotal, r.delivery_fee) if promo else 0.0
    return BasketView(
        customer_id=customer_id, restaurant_id=r.restaurant_id, restaurant_name=r.name, items=items,
        promo_code=basket.promo_code, subtotal=subtotal, discount=discount, delivery_fee=r.delivery_fee,
        total_before_tip=round(subtotal - discount + r.delivery_fee, 2), min_order=r.min_order,
        short_of_minimum=round(max(0.0, r.min_order - subtotal), 2), notice=notice,
    )


def _check_promo(state: FoodState, promo: PromoCode, restaurant: Restaurant, subtotal: float) -> None:
    today = state.now[:10]
    require(promo.expires_on >= today, f"promo '{promo.code}' expired on {promo.expires_on} (today is {today})",
            rejected=(promo.code, promo.expires_on, today))
    where = ", ".join(f"{state.restaurants[r].name} ({r})" for r in promo.restaurant_ids if r in state.restaurants)
    require(not promo.restaurant_ids or restaurant.restaurant_id in promo.restaurant_ids,
            f"promo '{promo.code}' is not valid at '{restaurant.name}' ({restaurant.restaurant_id}); "
            f"it is valid only at: {where}",
            reason='state', rejected=(promo.code, restaurant.name, where))
    require(subtotal >= promo.min_subtotal,
            f"promo '{promo.code}' needs a basket subtotal of at least {promo.min_subtotal:.2f}; "
            f"the subtotal is {subtotal:.2f} ({promo.min_subtotal - subtotal:.2f} short)",
            reason='limit', rejected=(promo.code, promo.min_subtotal, subtotal))


def _tip_room(order: FoodOrder) -> float:
    return round(order.subtotal * TIP_CAP_SHARE - order.tip, 2)


@tool()
def search_food_customers(
    state: FoodState,
    query: text("query", "Case-insensitive substring of the name, email or phone.", max_length=80, listed="name") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> FoodCustomerList:
    """Find food delivery customers by name, email or phone number."""
    q = query.strip().lower()
    found = [c for c in state.customers.values()
             if q in c.name.lower() or q in c.email.lower() or q in c.phone]
    return FoodCustomerList.of(found, offset, limit)


@tool(sensitive=("customer_id",))
def list_delivery_addresses(state: FoodState, customer_id: CustomerId, offset: Offset = 0,
                            limit: Limit = DEFAULT_LIMIT) -> AddressList:
    """List a customer's saved delivery addresses with their zones, a page at a time."""
    _customer(state, customer_id)
    found = [a for a in state.addresses.values() if a.customer_id == customer_id]
    return AddressList.of(found, offset, limit, customer_id=customer_id)


@tool(write=True, sensitive=("customer_id", "street"))
def add_delivery_address(
    state: FoodState,
    customer_id: CustomerId,
    label: text("query", "Short name for the address, e.g. 'home' or 'office'.", listed="label", example="home", min_length=1, max_length=30),
    street: text("word", "Street and number, e.g. '12 Mill Lane'.", listed="street", example="12 Mill Lane", min_length=5, max_length=120),
    zone: Annotated[Zone, Field(description="City zone the address is in.")],
    instructions: text("body", "Note for the courier, e.g. 'ring twice'.", listed="instructions", example="ring twice", max_length=140) = "",
) -> DeliveryAddress:
    """Save a new delivery address for a customer (at most 5; labels must be unique per customer)."""
    _customer(state, customer_id)
    mine = [a for a in state.addresses.values() if a.customer_id == customer_id]
    label = label.strip().lower()
    dup = next((a for a in mine if a.label.lower() == label), None)
    require(dup is None, f"customer '{customer_id}' already has an address labelled '{label}' "
            f"({dup.address_id if dup else ''}); choose another label",
            reason='conflict', params=('label',), rejected=(customer_id, label))
    require(len(mine) < MAX_ADDRESSES, f"customer '{customer_id}' already has {len(mine)} addresses, the maximum",
            reason='conflict', rejected=(customer_id,))
    addr = DeliveryAddress(address_id=state.new_id("ADR"), customer_id=customer_id, label=label,
                           street=street.strip(), zone=zone, instructions=instructions.strip())
    state.addresses[addr.address_id] = addr
    return addr


@tool()
def search_restaurants(
    state: FoodState,
    query: text("query", "Case-insensitive substring of the restaurant name.", max_length=80, listed="name") = "",
    cuisine: Annotated[Cuisine | None, Field(description="Only restaurants of this cuisine.")] = None,
    delivers_to: Annotated[Zone | None, Field(description="Only restaurants that deliver to this zone.")] = None,
    open_now: Annotated[bool | None, Field(description="True: only open now; false: only closed now.")] = None,
    dietary: Annotated[list[DietaryTag] | None, Field(description="Only restaurants with an available dish carrying all these tags.")] = None,
    min_rating: Annotated[float | None, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Only restaurants rated at least this.")] = None,
    sort: Annotated[RestaurantSort, Field(description="Order of results: best rating, cheapest delivery, or name.")] = "rating",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> RestaurantList:
    """Search restaurants by name, cuisine, delivery zone, opening now, dietary options and rating."""
    q, tags = query.strip().lower(), set(dietary or ())
    found = []
    for r in state.restaurants.values():
        if q not in r.name.lower() or (cuisine and r.cuisine != cuisine):
            continue
        if (delivers_to and delivers_to not in r.delivery_zones) or (min_rating and r.rating < min_rating):
            continue
        if open_now is not None and is_open(r, state.now) != open_now:
            continue
        if tags and not any(i.restaurant_id == r.restaurant_id and i.available and tags <= set(i.dietary_tags)
                            for i in state.menu_items.values()):
            continue
        found.append(_view(state, r))
    keys = {"rating": lambda v: (-v.rating, v.name), "delivery_fee": lambda v: (v.delivery_fee, v.name),
            "name": lambda v: (v.name, v.restaurant_id)}
    found.sort(key=keys[sort])
    return RestaurantList.of(found, offset, limit)


@tool(sensitive=("restaurant_id",))
def get_restaurant(state: FoodState, restaurant_id: RestaurantId) -> RestaurantView:
    """Get a restaurant's details: cuisine, zones it delivers to, hours and whether it is open now, fees, rating."""
    return _view(state, _restaurant(state, restaurant_id))


@tool(sensitive=("restaurant_id",))
def get_restaurant_menu(
    state: FoodState,
    restaurant_id: RestaurantId,
    category: Annotated[MenuCategory | None, Field(description="Only this menu section.")] = None,
    dietary: Annotated[list[DietaryTag] | None, Field(description="Only dishes carrying all these tags.")] = None,
    available_only: Annotated[bool, Field(description="Hide dishes that are sold out right now.")] = False,
    max_price: Annotated[float | None, Field(json_schema_extra=measure("money"), gt=0, le=1000, description="Only dishes up to this price.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> MenuView:
    """List a restaurant's menu items with prices, dietary tags, options and availability."""
    r = _restaurant(state, restaurant_id)
    tags = set(dietary or ())
    found = [i for i in state.menu_items.values()
             if i.restaurant_id == restaurant_id and (category is None or i.category == category)
             and tags <= set(i.dietary_tags) and (i.available or not available_only)
             and (max_price is None or i.price <= max_price)]
    return MenuView.of(found, offset, limit, restaurant_id=r.restaurant_id, restaurant_name=r.name,
                       open_now=is_open(r, state.now))


@tool(sensitive=("customer_id",))
def view_food_basket(state: FoodState, customer_id: CustomerId) -> BasketView:
    """Show a customer's food basket: restaurant, items, promo, fees and how far below the minimum order it is."""
    _customer(state, customer_id)
    return _basket_view(state, customer_id)


@tool(write=True, sensitive=("customer_id", "item_id", "quantity"))
def add_item_to_food_basket(
    state: FoodState,
    customer_id: CustomerId,
    item_id: ItemId,
    quantity: Annotated[int, Field(ge=1, le=20, description="Portions to add (1-20).")] = 1,
    options: text("word", "Option names from the item's menu entry, e.g. ['large portion'].", many=True, optional=True) = None,
    start_new_basket: Annotated[bool, Field(description="Empty a basket from another restaurant first.")] = False,
) -> BasketView:
    """Add a dish to a customer's basket. A basket holds dishes from one restaurant, which must be open now."""
    _customer(state, customer_id)
    item = find(state.menu_items, item_id, hint="use get_restaurant_menu to find item ids")
    r = state.restaurants[item.restaurant_id]
    _require_open(state, r)
    require(item.available, f"'{item.name}' ({item_id}) is sold out at '{r.name}' right now",
            rejected=(item.name, r.name))
    chosen = sorted({o.strip() for o in options or ()})
    valid = [o.name for o in item.options]
    bad = [o for o in chosen if o not in valid]
    require(not bad, f"unknown option(s) {', '.join(map(repr, bad))} for '{item.name}' (parameter 'options'); "
            f"valid: {', '.join(valid) or '(none)'}",
            reason='not_found', params=('options',), rejected=(item.name,),
            choices=(*tuple(map(repr, bad)), *tuple(valid),))
    basket = state.baskets.get(customer_id)
    held = state.restaurants[basket.restaurant_id] if basket is not None else r
    other = held.restaurant_id != r.restaurant_id
    require(not other or start_new_basket,
            f"the basket already holds dishes from '{held.name}' ({held.restaurant_id}), not '{r.name}'; a basket "
            "holds one restaurant. Order those first, remove them, or pass start_new_basket=true",
            reason='conflict', params=('start_new_basket',), rejected=(held.name, r.name))
    notice = f"emptied the basket from '{held.name}'" if other else ""
    if basket is None or other:
        basket = state.baskets[customer_id] = FoodBasket(customer_id=customer_id, restaurant_id=r.restaurant_id)
    line = next((ln for ln in basket.lines if ln.item_id == item_id and ln.options == chosen), None)
    if line is None:
        basket.lines.append(BasketLine(item_id=item_id, quantity=quantity, options=chosen))
    else:
        line.quantity += quantity
    return _basket_view(state, customer_id, notice)


@tool(write=True, sensitive=("customer_id", "item_id", "quantity"))
def remove_item_from_food_basket(
    state: FoodState,
    customer_id: CustomerId,
    item_id: ItemId,
    quantity: Annotated[int | None, Field(ge=1, le=20, description="Portions to remove; omit to remove the dish entirely.")] = None,
    options: text("word", "Which variant to remove when the dish is in the basket with different options.", many=True, optional=True) = None,
) -> BasketView:
    """Remove some or all portions of a dish from a customer's basket; a promo it no longer qualifies for is dropped."""
    _customer(state, customer_id)
    basket = state.baskets.get(customer_id)
    lines = basket.lines if basket else []
    chosen = None if options is None else sorted({o.strip() for o in options})
    matches = [ln for ln in lines if ln.item_id == item_id and (chosen is None or ln.options == chosen)]
    require(bool(matches), f"dish '{item_id}'{'' if chosen is None else f' with options {chosen}'} is not in "
            f"the basket of customer '{customer_id}' (parameter 'item_id'); the basket holds: "
            f"{known(f'{ln.item_id} {ln.options}' if ln.options else ln.item_id for ln in lines)}",
            params=('item_id',), rejected=(item_id, customer_id),
            choices=shown(f'{ln.item_id} {ln.options}' if ln.options else ln.item_id for ln in lines))
    require(quantity is None or len(matches) == 1,
            f"'{item_id}' is in the basket with different options ({'; '.join(str(m.options) for m in matches)}); "
            "pass options to say which one", params=('options',), rejected=(item_id,))
    assert basket is not None
    line = matches[0]
    require(quantity is None or quantity <= line.quantity,
            f"the basket holds only {line.quantity} of '{item_id}'; cannot remove {quantity}",
            reason='limit', rejected=(line.quantity, item_id, quantity))
    if quantity is not None and quantity < line.quantity:
        line.quantity -= quantity
    else:
        basket.lines = [ln for ln in basket.lines if all(ln is not m for m in matches)]
    notice = ""
    promo = state.promos.get(basket.promo_code) if basket.promo_code else None
    subtotal = _subtotal(state, basket)
    if promo is not None and subtotal < promo.min_subtotal:
        notice = f"promo '{promo.code}' removed: the subtotal {subtotal:.2f} is below its minimum {promo.min_subtotal:.2f}"
        basket.promo_code = None
    if not basket.lines:
        del state.baskets[customer_id]
        notice = (notice + "; " if notice else "") + "the basket is now empty"
    return _basket_view(state, customer_id, notice)


@tool(write=True, sensitive=("customer_id", "code"))
def apply_food_promo(
    state: FoodState,
    customer_id: CustomerId,
    code: entity_id("promo_code", "Promo code as given by the customer, e.g. 'FREEDEL'.", min_length=1, max_length=40, example="FREEDEL"),
) -> BasketView:
    """Apply a promo code to a customer's food basket (one per basket; a new one replaces the old)."""
    _customer(state, customer_id)
    code = code.strip().upper()
    promo = find(state.promos, code, hint="ask the customer to check the code")
    basket = state.baskets.get(customer_id)
    require(basket is not None, f"the basket of customer '{customer_id}' is empty; add dishes before applying a promo",
            rejected=(customer_id,))
    assert basket is not None
    require(basket.promo_code != code, f"promo '{code}' is already applied to this basket",
            reason='conflict', rejected=(code,))
    _check_promo(state, promo, state.restaurants[basket.restaurant_id], _subtotal(state, basket))
    notice = f"replaced promo '{basket.promo_code}'" if basket.promo_code else ""
    basket.promo_code = code
    return _basket_view(state, customer_id, notice)


@tool(write=True, sensitive=("customer_id", "address_id", "tip"))
def place_food_order(
    state: FoodState,
    customer_id: CustomerId,
    address_id: entity_id("delivery_address", "One of the customer's saved delivery addresses, e.g. 'ADR-0003'.", example="ADR-0003"),
    payment_method: Annotated[PaymentMethod, Field(description="How the customer pays.")] = "card",
    tip: Annotated[float, Field(json_schema_extra={MONEY: True}, ge=0, le=500, description="Courier tip, at most 50% of the subtotal.")] = 0.0,
) -> FoodOrder:
    """Order everything in a customer's basket for delivery to a saved address; the basket is emptied and a courier assigned."""
    _customer(state, customer_id)
    basket = state.baskets.get(customer_id)
    require(basket is not None, f"the basket of customer '{customer_id}' is empty; add dishes with add_item_to_food_basket first",
            rejected=(customer_id,))
    assert basket is not None
    addr = find(state.addresses, address_id, hint="use list_delivery_addresses")
    require(addr.customer_id == customer_id, f"address '{address_id}' belongs to another customer; addresses of "
            f"'{customer_id}': {known(a.address_id for a in state.addresses.values() if a.customer_id == customer_id)}",
            rejected=(address_id, customer_id),
            choices=shown(a.address_id for a in state.addresses.values() if a.customer_id == customer_id))
    r = state.restaurants[basket.restaurant_id]
    _require_open(state, r)
    sold_out = [f"'{state.menu_items[ln.item_id].name}' ({ln.item_id})" for ln in basket.lines
                if not state.menu_items[ln.item_id].available]
    require(not sold_out, "sold out now: " + ", ".join(sold_out) + "; remove with remove_item_from_food_basket",
            choices=tuple(sold_out))
    require(addr.zone in r.delivery_zones, f"address '{address_id}' is in zone '{addr.zone}', outside the delivery "
            f"area of '{r.name}', which delivers only to: {', '.join(r.delivery_zones)}",
            reason='state', params=('zone',), rejected=(address_id, addr.zone, r.name),
            choices=tuple(r.delivery_zones))
    subtotal = _subtotal(state, basket)
    require(subtotal >= r.min_order, f"the subtotal {subtotal:.2f} is {r.min_order - subtotal:.2f} short of the "
            f"minimum order of {r.min_order:.2f} at '{r.name}'; add more dishes",
            rejected=(subtotal, r.min_order, r.name))
    cap = round(subtotal * TIP_CAP_SHARE, 2)
    require(tip <= cap, f"tip {tip:.2f} is too large: at most 50% of the subtotal ({cap:.2f})",
            reason='limit', params=('tip',), rejected=(tip,))
    promo = state.promos[basket.promo_code] if basket.promo_code else None
    if promo is not None:
        _check_promo(state, promo, r, subtotal)
    discount = promo_discount(promo, subtotal, r.delivery_fee) if promo else 0.0
    state.advance()
    free = [c for c in state.couriers.values() if c.status == "available"]
    courier = next((c for c in free if c.zone == r.zone), free[0] if free else None)
    if courier is not None:
        courier.status = "delivering"
    order = FoodOrder(
        order_id=state.new_id("FOD"), customer_id=customer_id, restaurant_id=r.restaurant_id,
        address_id=address_id, zone=addr.zone,
        lines=[FoodOrderLine(item_id=ln.item_id, name=state.menu_items[ln.item_id].name, quantity=ln.quantity,
                             options=ln.options, unit_price=unit_price(state.menu_items[ln.item_id], ln.options))
               for ln in basket.lines],
        subtotal=subtotal, delivery_fee=r.delivery_fee, discount=discount, promo_code=basket.promo_code,
        tip=round(tip, 2), total=round(subtotal - discount + r.delivery_fee + tip, 2), payment_method=payment_method,
        status="placed", courier_id=courier.courier_id if courier else None, placed_at=state.now,
        eta=shift(state.now, minutes=r.prep_minutes + travel_minutes(r, addr.zone)),
    )
    state.orders[order.order_id] = order
    del state.baskets[customer_id]
    return order


@tool(sensitive=("customer_id", "restaurant_id"))
def list_food_orders(
    state: FoodState,
    customer_id: Annotated[CustomerId | None, Field(description="Only this customer's orders, e.g. 'FCU-0004'.", json_schema_extra={EXAMPLE: "FCU-0004"})] = None,
    restaurant_id: Annotated[RestaurantId | None, Field(description="Only orders from this restaurant.")] = None,
    status: Annotated[FoodOrderStatus | None, Field(description="Only orders in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> FoodOrderList:
    """List food orders, newest first, filtered by customer, restaurant and status."""
    if customer_id is not None:
        _customer(state, customer_id)
    if restaurant_id is not None:
        _restaurant(state, restaurant_id)
    found = [o for o in reversed(state.orders.values())
             if (customer_id is None or o.customer_id == customer_id)
             and (restaurant_id is None or o.restaurant_id == restaurant_id)
             and (status is None or o.status == status)]
    return FoodOrderList.of(found, offset, limit)


@tool(sensitive=("order_id",))
def get_food_order(state: FoodState, order_id: OrderId) -> FoodOrder:
    """Get one food order: dishes, amounts, status, courier, ETA and rating."""
    return _order(state, order_id)


@tool(sensitive=("order_id",))
def track_food_order(state: FoodState, order_id: OrderId) -> FoodOrderTracking:
    """Track a food order: status timeline, courier contact and minutes until the estimated delivery."""
    o = _order(state, order_id)
    addr = state.addresses.get(o.address_id)
    events = [TrackingEvent(timestamp=o.placed_at, event="order placed")]
    for ts, what in ((o.preparing_at, "restaurant started preparing"), (o.picked_up_at, "courier picked up the order"),
                     (o.delivered_at, "delivered"), (o.cancelled_at, f"cancelled ({o.cancel_reason})")):
        if ts:
            events.append(TrackingEvent(timestamp=ts, event=what))
    left = None
    if o.status not in ("delivered", "cancelled"):
        left = int((datetime.fromisoformat(o.eta) - state.now_dt()).total_seconds() // 60)
    return FoodOrderTracking(
        order_id=o.order_id, status=o.status, restaurant_name=state.restaurants[o.restaurant_id].name,
        delivery_address=f"{addr.street} ({addr.zone})" if addr else o.zone,
        courier=state.couriers.get(o.courier_id) if o.courier_id else None, eta=o.eta,
        minutes_until_eta=left, events=events,
    )


@tool(write=True, sensitive=("order_id",))
def cancel_food_order(
    state: FoodState,
    order_id: OrderId,
    reason: Annotated[FoodCancelReason, Field(description="Why the customer cancels.")],
) -> FoodOrder:
    """Cancel a food order and refund it in full; only possible before the restaurant starts preparing it."""
    o = _order(state, order_id)
    require(o.status != "cancelled", f"order '{order_id}' is already cancelled",
            reason='conflict', rejected=(order_id,))
    require(o.status == "placed", f"order '{order_id}' cannot be cancelled: it is {o.status.replace('_', ' ')}"
            + (f" (preparation started at {o.preparing_at})" if o.preparing_at else ""),
            rejected=(order_id, o.preparing_at))
    state.advance()
    o.status, o.cancelled_at, o.cancel_reason, o.refund_amount = "cancelled", state.now, reason, o.total
    if o.courier_id and state.couriers[o.courier_id].status == "delivering":
        state.couriers[o.courier_id].status = "available"
    return o


@tool(write=True, sensitive=("order_id", "amount"))
def add_delivery_tip(
    state: FoodState,
    order_id: OrderId,
    amount: Annotated[float, Field(json_schema_extra={MONEY: True}, gt=0, le=500, description="Tip to add for the courier.")],
) -> FoodOrder:
    """Add a courier tip to an order (up to 24 hours after delivery); all tips together may be at most 50% of the subtotal."""
    o = _order(state, order_id)
    require(o.status != "cancelled", f"order '{order_id}' is cancelled; it cannot be tipped",
            reason='state', rejected=(order_id,))
    if o.delivered_at:
        limit = shift(o.delivered_at, hours=TIP_WINDOW_HOURS)
        require(state.now <= limit, f"order '{order_id}' was delivered at {o.delivered_at}; tips can be added "
                f"only until {limit}", reason='state', rejected=(order_id, o.delivered_at, limit))
    room = _tip_room(o)
    require(amount <= room + 1e-9, f"tip {amount:.2f} is too large: tips on '{order_id}' may total at most "
            f"{o.subtotal * TIP_CAP_SHARE:.2f} (50% of the subtotal); {o.tip:.2f} already given, "
            f"so at most {max(room, 0.0):.2f} more",
            reason='conflict', params=('tip',), rejected=(amount, order_id, o.tip))
    o.tip = round(o.tip + amount, 2)
    o.total = round(o.total + amount, 2)
    return o


@tool(write=True, sensitive=("order_id", "food_stars", "courier_stars"))
def rate_food_order(
    state: FoodState,
    order_id: OrderId,
    food_stars: Annotated[int, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Food rating, 1-5 stars.")],
    courier_stars: Annotated[int | None, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Courier rating, 1-5 stars.")] = None,
    comment: text("body", "Optional review text.", max_length=500) = "",
) -> RatingReceipt:
    """Rate a delivered food order (food and optionally the courier); each order can be rated once."""
    o = _order(state, order_id)
    require(o.status == "delivered", f"order '{order_id}' is {o.status.replace('_', ' ')}; only delivered orders can be rated",
            reason='state', rejected=(order_id,), wanted=('delivered',))
    require(o.rating_id is None, f"order '{order_id}' was already rated ({o.rating_id})",
            reason='conflict', rejected=(order_id,))
    require(courier_stars is None or o.courier_id is not None, f"order '{order_id}' had no courier to rate",
            rejected=(order_id,))
    r = state.restaurants[o.restaurant_id]
    rating = FoodRating(rating_id=state.new_id("RAT"), order_id=order_id, restaurant_id=r.restaurant_id,
                        courier_id=o.courier_id, food_stars=food_stars, courier_stars=courier_stars,
                        comment=comment.strip(), created_at=state.now)
    state.ratings[rating.rating_id] = rating
    o.rating_id = rating.rating_id
    r.rating = round((r.rating * r.rating_count + food_stars) / (r.rating_count + 1), 2)
    r.rating_count += 1
    if courier_stars is not None and o.courier_id in state.couriers:
        c = state.couriers[o.courier_id]
        c.rating = round((c.rating * c.rating_count + courier_stars) / (c.rating_count + 1), 2)
        c.rating_count += 1
    return RatingReceipt(rating=rating, restaurant_rating=r.rating, restaurant_rating_count=r.rating_count)
