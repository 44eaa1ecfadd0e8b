"""Shop server state: customers, products, carts, orders, coupons and product reviews."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, entity_id, entity_ids, naming
from prove.env.world import CITIES, STREETS, days_before, email, money, person, shift

ProductCategory = Literal["electronics", "home", "kitchen", "books", "clothing", "sports", "toys", "beauty"]
OrderStatus = Literal["pending", "paid", "shipped", "delivered", "cancelled", "returned"]
ShippingMethod = Literal["standard", "express", "overnight"]
CouponKind = Literal["percent", "fixed"]
CancelReason = Literal["changed_mind", "found_better_price", "ordered_by_mistake", "delivery_too_slow"]
ReturnReason = Literal["damaged", "wrong_item", "not_as_described", "no_longer_needed"]
ProductSort = Literal["relevance", "price_low_to_high", "price_high_to_low", "rating"]

SHIPPING_FEES: dict[str, float] = {"standard": 4.99, "express": 12.99, "overnight": 24.99}
TRANSIT_DAYS: dict[str, int] = {"standard": 5, "express": 2, "overnight": 1}
FREE_STANDARD_SHIPPING_FROM = 50.0
RETURN_WINDOW_DAYS = 30

CustomerId = entity_id("customer", "Shop customer id, e.g. 'SHC-0004'.", example="SHC-0004")
Sku = entity_id("product", "Product SKU, e.g. 'SKU-0012'.", example="SKU-0012")
OrderId = entity_id("order", "Order id, e.g. 'ORD-0031'.", example="ORD-0031")
CouponCode = entity_id("coupon", "Coupon code, e.g. 'SPRING15'.", example="SPRING15")
ReviewId = entity_id("review", "Product review id, e.g. 'REV-0007'.", example="REV-0007")


class ShopCustomer(Record):
    customer_id: CustomerId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    city: str
    address: str = Field(description="Default shipping address.")
    member_since: str


class Product(Record):
    sku: Sku
    name: str = Field(json_schema_extra=naming("name"))
    brand: str
    category: ProductCategory
    price: float = Field(json_schema_extra={MONEY: True})
    stock: int = Field(description="Units available to order now.")
    rating: float | None = Field(description="Average review rating (1-5); None without reviews.")
    review_count: int


class CartLine(Record):
    sku: Sku
    quantity: int


class Cart(Record):
    customer_id: CustomerId
    items: list[CartLine] = Field(default_factory=list)
    coupon_code: CouponCode | None = None


class OrderLine(Record):
    sku: Sku
    name: str = Field(json_schema_extra=naming("name"))
    quantity: int
    unit_price: float = Field(json_schema_extra={MONEY: True})


class Order(Record):
    order_id: OrderId
    customer_id: CustomerId
    status: OrderStatus
    items: list[OrderLine]
    subtotal: float = Field(json_schema_extra={MONEY: True})
    discount: float = 0.0
    coupon_code: CouponCode | None = None
    shipping_fee: float = Field(json_schema_extra={MONEY: True})
    total: float = Field(json_schema_extra={MONEY: True}, description="What the customer pays: subtotal - discount + shipping_fee.")
    shipping_method: ShippingMethod
    shipping_address: str
    placed_at: str
    estimated_delivery: str
    carrier: str | None = None
    tracking_number: str | None = None
    shipped_at: str | None = None
    delivered_at: str | None = None
    cancelled_at: str | None = None
    cancel_reason: CancelReason | None = None
    returned_at: str | None = None
    return_reason: ReturnReason | None = None
    refund_amount: float = Field(0.0, json_schema_extra={MONEY: True})


class Coupon(Record):
    code: CouponCode
    description: str
    kind: CouponKind
    value: float = Field(description="Percent off (kind 'percent') or amount off (kind 'fixed').")
    min_order: float = Field(description="Smallest cart subtotal the coupon applies to.")
    expires_on: str
    single_use: bool = Field(description="If true, each customer may use it once.")
    used_by: entity_ids("customer", "Customers who used it (sorted).") = Field(default_factory=list)


class Review(Record):
    review_id: ReviewId
    sku: Sku
    customer_id: CustomerId
    rating: int
    title: str = Field(json_schema_extra=naming("title"))
    body: str
    created_at: str


class ShopState(ServerState):
    customers: dict[str, ShopCustomer] = Field(default_factory=dict)
    products: dict[str, Product] = Field(default_factory=dict)
    carts: dict[str, Cart] = Field(default_factory=dict, description="Open carts by customer id.")
    orders: dict[str, Order] = Field(default_factory=dict)
    coupons: dict[str, Coupon] = Field(default_factory=dict)
    reviews: dict[str, Review] = Field(default_factory=dict)


def coupon_discount(coupon: Coupon, subtotal: float) -> float:
    """The discount a coupon gives on a subtotal (never more than the subtotal)."""
    off = subtotal * coupon.value / 100 if coupon.kind == "percent" else coupon.value
    return round(min(off, subtotal), 2)


def shipping_fee(method: str, merchandise: float) -> float:
    """Standard shipping is free from FREE_STANDARD_SHIPPING_FROM after discounts."""
    if method == "standard" and merchandise >= FREE_STANDARD_SHIPPING_FROM:
        return 0.0
    return SHIPPING_FEES[method]


_CATALOG: dict[str, tuple[tuple[str, ...], tuple[tuple[str, float, float], ...]]] = {
    "electronics": (("Voltix", "Sonora", "Pixelon"), (
        ("Wireless Earbuds", 29, 149), ("Bluetooth Speaker", 25, 120), ("USB-C Charger 65W", 15, 45),
        ("Noise-Cancelling Headphones", 99, 349), ("Smartwatch", 129, 399), ("4K Webcam", 49, 159),
        ("Mechanical Keyboard", 59, 189), ("Portable SSD 1TB", 69, 159))),
    "home": (("Hearthly", "Nordhem"), (
        ("Linen Duvet Cover", 59, 139), ("Blackout Curtains", 25, 79), ("Scented Candle Set", 15, 45),
        ("Memory Foam Pillow", 29, 89), ("Wool Throw Blanket", 39, 119), ("LED Desk Lamp", 19, 69))),
    "kitchen": (("Copperleaf", "Brava"), (
        ("Chef's Knife 8in", 35, 149), ("Cast Iron Skillet", 25, 79), ("Pour-Over Coffee Maker", 19, 59),
        ("Electric Kettle", 29, 99), ("Nonstick Pan Set", 59, 189), ("Stand Mixer", 179, 449))),
    "books": (("Lantern Press", "Bluebird Books"), (
        ("The Quiet Harbor", 12, 28), ("Practical Python Projects", 25, 49), ("Mountain Trails Guide", 15, 32),
        ("Cooking for Two", 18, 35), ("A History of Maps", 20, 45), ("Mindful Mornings", 11, 24))),
    "clothing": (("Northtrail", "Urbanweave"), (
        ("Merino Wool Sweater", 59, 139), ("Packable Rain Jacket", 49, 159), ("Running Shorts", 19, 45),
        ("Slim Denim Jeans", 39, 99), ("Cotton T-Shirt 3-Pack", 19, 39), ("Leather Belt", 25, 69))),
    "sports": (("Peakform", "Strideon"), (
        ("Yoga Mat", 19, 79), ("Adjustable Dumbbells", 99, 329), ("Trail Running Shoes", 79, 169),
        ("Insulated Water Bottle", 15, 45), ("2-Person Camping Tent", 89, 259), ("Cycling Helmet", 39, 129))),
    "toys": (("Tinkertown", "Jollybox"), (
        ("Wooden Building Blocks", 19, 59), ("Remote Control Car", 29, 89), ("1000-Piece Puzzle", 12, 29),
        ("Plush Bear", 12, 35), ("Junior Science Kit", 25, 69), ("Board Game Night Pack", 29, 65))),
    "beauty": (("Lumiskin", "Purelle"), (
        ("Vitamin C Serum", 15, 59), ("Ionic Hair Dryer", 39, 149), ("Shea Body Butter", 9, 25),
        ("Electric Toothbrush", 29, 129), ("Sunscreen SPF 50", 9, 29), ("Beard Trimmer", 25, 89))),
}

_COUPONS = (  # code, description, kind, value, min_order, expires_on, single_use
    ("WELCOME10", "10% off a first order", "percent", 10.0, 0.0, "2026-12-31", True),
    ("SPRING15", "15% off orders from 60.00", "percent", 15.0, 60.0, "2026-05-31", False),
    ("SAVE20", "20.00 off orders from 120.00", "fixed", 20.0, 120.0, "2026-06-30", False),
    ("TAKE5", "5.00 off orders from 30.00", "fixed", 5.0, 30.0, "2026-04-30", False),
    ("VIP25", "25% off orders from 200.00, once per customer", "percent", 25.0, 200.0, "2026-09-30", True),
    ("WINTER20", "20% off orders from 50.00 (winter sale)", "percent", 20.0, 50.0, "2026-02-28", False),
    ("HOLIDAY30", "30.00 off orders from 150.00 (holiday sale)", "fixed", 30.0, 150.0, "2026-01-05", True),
)

_REVIEW_TITLES = {
    1: ("Broke within a week", "Very disappointed", "Not worth the money"),
    2: ("Below expectations", "Cheap feel", "Meh"),
    3: ("Does the job", "Okay for the price", "Average"),
    4: ("Really good", "Solid purchase", "Happy with it"),
    5: ("Excellent!", "Love it", "Best purchase this year", "Exactly as described"),
}

_REVIEW_BODIES = {
    1: ("Stopped working after a few days and support was slow.", "Nothing like the photos."),
    2: ("Works, but the build quality is poor for the price.", "Smaller than I expected."),
    3: ("Fine for everyday use, nothing special.", "Does what it says; shipping took a while."),
    4: ("Good quality and arrived quickly.", "Would buy again, minor quibbles only."),
    5: ("Great quality, exactly what I needed.", "Exceeded my expectations, highly recommend."),
}

# status -> (max days ago, min days ago) for when an order was placed.
_PLACED_WINDOW: dict[str, tuple[int, int]] = {
    "pending": (1, 0), "paid": (2, 0), "shipped": (4, 1), "delivered": (90, 7),
    "cancelled": (60, 1), "returned": (80, 25),
}


def initial_state(seed: int) -> ShopState:
    """A shop with ~28 customers, ~40 products, ~80 orders, reviews, coupons and open carts."""
    rng = random.Random(seed)
    now = "2026-04-14T10:00"
    state = ShopState(now=now)
    cust_id, sku_id, ord_id, rev_id = Counter("SHC"), Counter("SKU"), Counter("ORD"), Counter("REV")
    for _ in range(rng.randrange(24, 32)):
        name, city = person(rng), rng.choice(CITIES)
        cid = cust_id()
        state.customers[cid] = ShopCustomer(
            customer_id=cid, name=name, email=email(name, "shopmail.example.com"), city=city,
            address=f"{rng.randrange(1, 240)} {rng.choice(STREETS)}, {city}",
            member_since=days_before(now, rng, 1500, 30)[:10],
        )
    for category, (brands, items) in _CATALOG.items():
        for item, low, high in items:
            if rng.random() < 0.15:
                continue
            brand, sku = rng.choice(brands), sku_id()
            stock = rng.choice([0, 1, 2, 3]) if rng.random() < 0.2 else rng.randrange(5, 120)
            state.products[sku] = Product(
                sku=sku, name=item if category == "books" else f"{brand} {item}", brand=brand,
                category=category, price=round(money(rng, low, high) // 1 + 0.99, 2), stock=stock,
                rating=None, review_count=0,
            )
    for code, desc, kind, value, min_order, expires, single in _COUPONS:
        state.coupons[code] = Coupon(code=code, description=desc, kind=kind, value=value,
                                     min_order=min_order, expires_on=expires, single_use=single)
    customers, products = list(state.customers.values()), list(state.products.values())
    plans, reviewed = [], set()  # `reviewed` is a local builder aid, never stored in state
    for _ in range(rng.randrange(70, 90)):
        status = rng.choices(list(_PLACED_WINDOW), weights=[1, 2, 2, 8, 1.5, 1])[0]
        hi, lo = _PLACED_WINDOW[status]
        plans.append((days_before(now, rng, hi, lo), status))
    for placed, status in sorted(plans):
        cust = rng.choice(customers)
        method = rng.choices(["standard", "express", "overnight"], weights=[6, 3, 1])[0]
        lines = [OrderLine(sku=p.sku, name=p.name, quantity=rng.choice([1, 1, 1, 2, 2, 3]), unit_price=p.price)
                 for p in rng.sample(products, rng.choice([1, 1, 2, 2, 3, 4]))]
        subtotal = round(sum(ln.quantity * ln.unit_price for ln in lines), 2)
        usable = [c for c in state.coupons.values()
                  if c.min_order <= subtotal and placed[:10] <= c.expires_on
                  and not (c.single_use and cust.customer_id in c.used_by)]
        coupon = rng.choice(usable) if usable and rng.random() < 0.25 else None
        discount = coupon_discount(coupon, subtotal) if coupon else 0.0
        if coupon:
            coupon.used_by = sorted({*coupon.used_by, cust.customer_id})
        fee = shipping_fee(method, subtotal - discount)
        order = Order(
            order_id=ord_id(), customer_id=cust.customer_id, status=status, items=lines,
            subtotal=subtotal, discount=discount, coupon_code=coupon.code if coupon else None,
            shipping_fee=fee, total=round(subtotal - discount + fee, 2), shipping_method=method,
            shipping_address=cust.address, placed_at=placed,
            estimated_delivery=shift(placed, days=TRANSIT_DAYS[method] + 1)[:10],
        )
        if status in ("shipped", "delivered", "returned"):
            order.shipped_at = shift(placed, hours=rng.randrange(6, 24))
            order.carrier = rng.choice(["UPS", "DHL", "FedEx"])
            order.tracking_number = f"1Z{rng.randrange(10**9, 10**10)}"
        if status in ("delivered", "returned"):
            order.delivered_at = shift(order.shipped_at or placed, days=TRANSIT_DAYS[method], hours=rng.randrange(0, 8))
        if status == "returned":
            order.returned_at = shift(order.delivered_at or placed, days=rng.randrange(2, 14))
            order.return_reason = rng.choice(["damaged", "wrong_item", "not_as_described", "no_longer_needed"])
            order.refund_amount = order.total if order.return_reason in ("damaged", "wrong_item") \
                else round(order.total - fee, 2)
        if status == "cancelled":
            order.cancelled_at = shift(placed, hours=rng.randrange(1, 12))
            order.cancel_reason = rng.choice(["changed_mind", "found_better_price", "ordered_by_mistake"])
            order.refund_amount = order.total
        state.orders[order.order_id] = order
        if order.delivered_at is None:
            continue
        for line in lines:
            written = shift(order.delivered_at, days=rng.randrange(1, 12))
            if (line.sku, cust.customer_id) in reviewed or written > now or rng.random() < 0.45:
                continue
            reviewed.add((line.sku, cust.customer_id))
            stars = rng.choices([1, 2, 3, 4, 5], weights=[1, 1, 2, 4, 5])[0]
            rid = rev_id()
            state.reviews[rid] = Review(
                review_id=rid, sku=line.sku, customer_id=cust.customer_id, rating=stars,
                title=rng.choice(_REVIEW_TITLES[stars]), body=rng.choice(_REVIEW_BODIES[stars]), created_at=written,
            )
    state.reviews = dict(sorted(state.reviews.items(), key=lambda kv: kv[1].created_at))
    stars_by_sku: dict[str, list[int]] = {}
    for review in state.reviews.values():
        stars_by_sku.setdefault(review.sku, []).append(review.rating)
    for sku, stars in stars_by_sku.items():
        state.products[sku].rating = round(sum(stars) / len(stars), 2)
        state.products[sku].review_count = len(stars)
    for cust in rng.sample(customers, 6):
        lines = [CartLine(sku=p.sku, quantity=rng.randint(1, min(2, p.stock)))
                 for p in rng.sample([p for p in products if p.stock > 0], rng.randint(1, 3))]
        state.carts[cust.customer_id] = Cart(customer_id=cust.customer_id, items=lines)
    return state
