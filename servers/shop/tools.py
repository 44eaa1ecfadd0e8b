"""Shop tools: product search and reviews, shopping carts, coupons, checkout, orders, shipments."""

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

from .state import (
    RETURN_WINDOW_DAYS,
    TRANSIT_DAYS,
    CancelReason,
    Cart,
    CartLine,
    Coupon,
    CouponCode,
    CustomerId,
    Order,
    OrderId,
    OrderLine,
    OrderStatus,
    Product,
    ProductCategory,
    ProductSort,
    ReturnReason,
    Review,
    ShippingMethod,
    ShopCustomer,
    ShopState,
    Sku,
    coupon_discount,
    shipping_fee,
)


class ProductList(Page):
    products: list[Product]


class ReviewList(Page):
    sku: Sku
    average_rating: float | None
    reviews: list[Review]


class ShopCustomerList(Page):
    customers: list[ShopCustomer]


class CartItem(BaseModel):
    sku: Sku
    name: str = Field(json_schema_extra=naming("name"))
    quantity: int
    unit_price: float = Field(json_schema_extra={MONEY: True})
    line_total: float = Field(json_schema_extra={MONEY: True})
    stock_left: int


class CartView(BaseModel):
    customer_id: CustomerId
    items: list[CartItem]
    coupon_code: CouponCode | None
    subtotal: float = Field(json_schema_extra={MONEY: True})
    discount: float
    total_before_shipping: float = Field(json_schema_extra={MONEY: True})
    notice: str = Field("", description="What changed as a side effect, e.g. a coupon removed.")


class OrderList(Page):
    orders: list[Order]


class TrackingEvent(BaseModel):
    timestamp: str
    event: str


class ShipmentTracking(BaseModel):
    order_id: OrderId
    status: OrderStatus
    shipping_method: ShippingMethod
    shipping_address: str
    carrier: str | None
    tracking_number: str | None
    estimated_delivery: str
    events: list[TrackingEvent]


def _customer(state: ShopState, customer_id: str) -> ShopCustomer:
    return find(state.customers, customer_id)


def _product(state: ShopState, sku: str) -> Product:
    return find(state.products, sku)


def _order(state: ShopState, order_id: str) -> Order:
    return find(state.orders, order_id)


def _subtotal(state: ShopState, cart: Cart) -> float:
    return round(sum(state.products[ln.sku].price * ln.quantity for ln in cart.items), 2)


def _cart_view(state: ShopState, customer_id: str, notice: str = "") -> CartView:
    cart = state.carts.get(customer_id) or Cart(customer_id=customer_id)
    items = []
    for line in cart.items:
        p = state.products[line.sku]
        items.append(CartItem(sku=p.sku, name=p.name, quantity=line.quantity, unit_price=p.price,
                              line_total=round(p.price * line.quantity, 2), stock_left=p.stock))
    subtotal = _subtotal(state, cart)
    coupon = state.coupons.get(cart.coupon_code) if cart.coupon_code else None
    discount = coupon_discount(coupon, subtotal) if coupon else 0.0
    return CartView(customer_id=customer_id, items=items, coupon_code=cart.coupon_code,
                    subtotal=subtotal, discount=discount,
                    total_before_shipping=round(subtotal - discount, 2), notice=notice)


def _check_coupon(state: ShopState, coupon: Coupon, customer_id: str, subtotal: float) -> None:
    today = state.now[:10]
    require(coupon.expires_on >= today,
            f"coupon '{coupon.code}' expired on {coupon.expires_on} (today is {today})",
            rejected=(coupon.code, coupon.expires_on, today))
    require(not (coupon.single_use and customer_id in coupon.used_by),
            f"coupon '{coupon.code}' is single-use and customer '{customer_id}' has already used it",
            reason='conflict', rejected=(coupon.code, customer_id))
    require(subtotal >= coupon.min_order,
            f"coupon '{coupon.code}' needs a cart subtotal of at least {coupon.min_order:.2f}; "
            f"the cart subtotal is {subtotal:.2f}",
            reason='limit', rejected=(coupon.code, coupon.min_order, subtotal))


def _restock(state: ShopState, order: Order) -> None:
    for line in order.items:
        if line.sku in state.products:
            state.products[line.sku].stock += line.quantity


@tool()
def search_products(
    state: ShopState,
    query: text("query", "Case-insensitive words to find in the product name or brand; empty matches all.", max_length=100, listed="name") = "",
    category: Annotated[ProductCategory | None, Field(description="Only products in this category.")] = None,
    min_price: Annotated[float | None, Field(json_schema_extra=measure("money"), ge=0, description="Only products priced at least this much.")] = None,
    max_price: Annotated[float | None, Field(json_schema_extra=measure("money"), ge=0, description="Only products priced at most this much.")] = None,
    in_stock_only: Annotated[bool, Field(description="Only products with stock left.")] = False,
    sort_by: Annotated[ProductSort, Field(description="Result order.")] = "relevance",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ProductList:
    """Search the shop's catalog by words, category, price range and availability, a page at a time."""
    require(min_price is None or max_price is None or min_price <= max_price,
            f"min_price ({min_price}) must not be greater than max_price ({max_price})",
            params=('max_price', 'min_price'))
    words = query.lower().split()
    found = [
        p for p in state.products.values()
        if all(w in f"{p.name} {p.brand}".lower() for w in words)
        and (category is None or p.category == category)
        and (min_price is None or p.price >= min_price)
        and (max_price is None or p.price <= max_price)
        and (not in_stock_only or p.stock > 0)
    ]
    if sort_by == "price_low_to_high":
        found.sort(key=lambda p: p.price)
    elif sort_by == "price_high_to_low":
        found.sort(key=lambda p: -p.price)
    elif sort_by == "rating":
        found.sort(key=lambda p: -(p.rating or 0.0))
    return ProductList.of(found, offset, limit)


@tool(sensitive=("sku",))
def get_product(state: ShopState, sku: Sku) -> Product:
    """Get one product: name, brand, category, price, units in stock and average rating."""
    return _product(state, sku)


@tool(sensitive=("sku",))
def list_product_reviews(
    state: ShopState,
    sku: Sku,
    min_rating: Annotated[int, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Only reviews with at least this many stars.")] = 1,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ReviewList:
    """List a product's customer reviews, newest first, optionally only those with enough stars."""
    product = _product(state, sku)
    found = [r for r in reversed(state.reviews.values()) if r.sku == sku and r.rating >= min_rating]
    return ReviewList.of(found, offset, limit, sku=sku, average_rating=product.rating)


@tool()
def search_shop_customers(
    state: ShopState,
    query: text("query", "Case-insensitive substring of the customer's name or email.", max_length=100, listed="name") = "",
    city: text("word", "Only customers living in this city.", listed="city", optional=True) = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ShopCustomerList:
    """Find shop customers by name or email, optionally in one city."""
    q = query.strip().lower()
    found = [
        c for c in state.customers.values()
        if (q in c.name.lower() or q in c.email.lower()) and (city is None or c.city.lower() == city.strip().lower())
    ]
    return ShopCustomerList.of(found, offset, limit)


@tool(sensitive=("customer_id",))
def get_shop_customer(state: ShopState, customer_id: CustomerId) -> ShopCustomer:
    """Get a shop customer's profile: name, email, city and default shipping address."""
    return _customer(state, customer_id)


@tool(sensitive=("customer_id",))
def view_shopping_cart(state: ShopState, customer_id: CustomerId) -> CartView:
    """Show a customer's shopping cart: items, applied coupon, subtotal and discount."""
    _customer(state, customer_id)
    return _cart_view(state, customer_id)


@tool(write=True, sensitive=("customer_id", "sku", "quantity"))
def add_to_shopping_cart(
    state: ShopState,
    customer_id: CustomerId,
    sku: Sku,
    quantity: Annotated[int, Field(ge=1, le=20, description="Units to add (1-20).")] = 1,
) -> CartView:
    """Add units of a product to a customer's shopping cart; fails if not enough is in stock."""
    _customer(state, customer_id)
    product = _product(state, sku)
    require(product.stock > 0, f"'{product.name}' ({sku}) is out of stock",
            rejected=(product.name,))
    cart = state.carts.get(customer_id)
    line = next((ln for ln in cart.items if ln.sku == sku), None) if cart else None
    in_cart = line.quantity if line else 0
    require(in_cart + quantity <= product.stock,
            f"only {product.stock} of '{product.name}' ({sku}) left in stock"
            + (f" and {in_cart} already in the cart" if in_cart else "") + f"; requested {quantity}",
            reason='limit', rejected=(product.stock, product.name, in_cart, quantity))
    if cart is None:
        cart = state.carts[customer_id] = Cart(customer_id=customer_id)
    if line is None:
        cart.items.append(CartLine(sku=sku, quantity=quantity))
    else:
        line.quantity += quantity
    return _cart_view(state, customer_id)


@tool(write=True, sensitive=("customer_id", "sku", "quantity"))
def remove_from_shopping_cart(
    state: ShopState,
    customer_id: CustomerId,
    sku: Sku,
    quantity: Annotated[int | None, Field(ge=1, le=20, description="Units to remove; omit to remove the product entirely.")] = None,
) -> CartView:
    """Remove some or all units of a product from a customer's cart; a coupon the cart no longer qualifies for is dropped."""
    _customer(state, customer_id)
    cart = state.carts.get(customer_id)
    lines = cart.items if cart else []
    line = next((ln for ln in lines if ln.sku == sku), None)
    require(line is not None, f"product '{sku}' is not in the cart of customer '{customer_id}' "
            f"(parameter 'sku'); the cart holds: {known(ln.sku for ln in lines)}",
            params=('sku',), rejected=(sku, customer_id), choices=shown(ln.sku for ln in lines))
    assert cart is not None and line is not None
    require(quantity is None or quantity <= line.quantity,
            f"the cart holds only {line.quantity} of '{sku}'; cannot remove {quantity}",
            reason='limit', rejected=(line.quantity, sku, quantity))
    if quantity is None or quantity == line.quantity:
        cart.items.remove(line)
    else:
        line.quantity -= quantity
    notice = ""
    coupon = state.coupons.get(cart.coupon_code) if cart.coupon_code else None
    subtotal = _subtotal(state, cart)
    if coupon is not None and subtotal < coupon.min_order:
        notice = f"coupon '{coupon.code}' removed: the subtotal {subtotal:.2f} is below its minimum {coupon.min_order:.2f}"
        cart.coupon_code = None
    if not cart.items:
        del state.carts[customer_id]
    return _cart_view(state, customer_id, notice)


@tool(write=True, sensitive=("customer_id", "code"))
def apply_coupon_to_cart(
    state: ShopState,
    customer_id: CustomerId,
    code: entity_id("coupon", "Coupon code as given by the customer, e.g. 'SPRING15'.", min_length=1, max_length=40, example="SPRING15"),
) -> CartView:
    """Apply a coupon code to a customer's cart (one coupon per cart; a new one replaces the old)."""
    _customer(state, customer_id)
    code = code.strip().upper()
    coupon = state.coupons.get(code)
    require(coupon is not None, f"coupon code '{code}' not found (parameter 'code'); "
            "ask the customer to check the code",
            reason='not_found', params=('code',), rejected=(code,))
    assert coupon is not None
    cart = state.carts.get(customer_id)
    require(cart is not None and bool(cart.items),
            f"the cart of customer '{customer_id}' is empty; add products before applying a coupon",
            rejected=(customer_id,))
    assert cart is not None
    require(cart.coupon_code != code, f"coupon '{code}' is already applied to this cart",
            reason='conflict', rejected=(code,))
    _check_coupon(state, coupon, customer_id, _subtotal(state, cart))
    notice = f"replaced coupon '{cart.coupon_code}'" if cart.coupon_code else ""
    cart.coupon_code = code
    return _cart_view(state, customer_id, notice)


@tool(write=True, sensitive=("customer_id", "shipping_address"))
def checkout_shopping_cart(
    state: ShopState,
    customer_id: CustomerId,
    shipping_method: Annotated[ShippingMethod, Field(description="standard (5 days, free from 50.00), express (2 days) or overnight.")] = "standard",
    shipping_address: text("word", "Deliver here instead of the customer's default address.", listed="shipping_address", optional=True, min_length=5, max_length=200) = None,
) -> Order:
    """Place an order for everything in a customer's cart and pay for it; stock is reserved and the cart emptied."""
    customer = _customer(state, customer_id)
    cart = state.carts.get(customer_id)
    require(cart is not None and bool(cart.items),
            f"the cart of customer '{customer_id}' is empty; add products with add_to_shopping_cart first",
            rejected=(customer_id,))
    assert cart is not None
    short = [f"'{state.products[ln.sku].name}' ({ln.sku}) has {state.products[ln.sku].stock} left, "
             f"the cart wants {ln.quantity}" for ln in cart.items if ln.quantity > state.products[ln.sku].stock]
    require(not short, "not enough stock: " + "; ".join(short) + ". Use remove_from_shopping_cart first")
    address = (customer.address if shipping_address is None else shipping_address).strip()
    require(len(address) >= 5, f"shipping_address must be a full address, got '{address}'",
            params=('shipping_address',), rejected=(address,))
    subtotal = _subtotal(state, cart)
    coupon = state.coupons[cart.coupon_code] if cart.coupon_code else None
    if coupon is not None:
        _check_coupon(state, coupon, customer_id, subtotal)
    discount = coupon_discount(coupon, subtotal) if coupon else 0.0
    fee = shipping_fee(shipping_method, subtotal - discount)
    state.advance()
    order = Order(
        order_id=state.new_id("ORD"), customer_id=customer_id, status="paid",
        items=[OrderLine(sku=ln.sku, name=state.products[ln.sku].name, quantity=ln.quantity,
                         unit_price=state.products[ln.sku].price) for ln in cart.items],
        subtotal=subtotal, discount=discount, coupon_code=cart.coupon_code, shipping_fee=fee,
        total=round(subtotal - discount + fee, 2), shipping_method=shipping_method,
        shipping_address=address, placed_at=state.now,
        estimated_delivery=shift(state.now, days=TRANSIT_DAYS[shipping_method] + 1)[:10],
    )
    for line in cart.items:
        state.products[line.sku].stock -= line.quantity
    if coupon is not None:
        coupon.used_by = sorted({*coupon.used_by, customer_id})
    del state.carts[customer_id]
    state.orders[order.order_id] = order
    return order


@tool(sensitive=("customer_id",))
def list_shop_orders(
    state: ShopState,
    customer_id: Annotated[CustomerId | None, Field(description="Only this customer's orders, e.g. 'SHC-0004'.", json_schema_extra={EXAMPLE: "SHC-0004"})] = None,
    status: Annotated[OrderStatus | None, Field(description="Only orders in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> OrderList:
    """List shop orders, newest first, filtered by customer and status, a page at a time."""
    if customer_id is not None:
        _customer(state, customer_id)
    found = [
        o for o in reversed(state.orders.values())
        if (customer_id is None or o.customer_id == customer_id) and (status is None or o.status == status)
    ]
    return OrderList.of(found, offset, limit)


@tool(sensitive=("order_id",))
def get_shop_order(state: ShopState, order_id: OrderId) -> Order:
    """Get one order: items, prices, coupon, totals, status, shipping details and refunds."""
    return _order(state, order_id)


@tool(sensitive=("order_id",))
def track_shipment(state: ShopState, order_id: OrderId) -> ShipmentTracking:
    """Track an order's shipment: carrier, tracking number, estimated delivery and history."""
    order = _order(state, order_id)
    require(order.status != "cancelled",
            f"order '{order_id}' was cancelled on {order.cancelled_at}; it has no shipment to track",
            rejected=(order_id, order.cancelled_at))
    events = [TrackingEvent(timestamp=order.placed_at, event=f"order placed ({order.status if order.status == 'pending' else 'paid'})")]
    if order.shipped_at:
        events.append(TrackingEvent(timestamp=order.shipped_at, event=f"shipped with {order.carrier}, tracking {order.tracking_number}"))
    if order.delivered_at:
        events.append(TrackingEvent(timestamp=order.delivered_at, event=f"delivered to {order.shipping_address}"))
    if order.returned_at:
        events.append(TrackingEvent(timestamp=order.returned_at, event=f"returned; refunded {order.refund_amount:.2f}"))
    return ShipmentTracking(
        order_id=order_id, status=order.status, shipping_method=order.shipping_method,
        shipping_address=order.shipping_address, carrier=order.carrier,
        tracking_number=order.tracking_number, estimated_delivery=order.estimated_delivery, events=events,
    )


@tool(write=True, sensitive=("order_id",))
def cancel_shop_order(
    state: ShopState,
    order_id: OrderId,
    reason: Annotated[CancelReason, Field(description="Why the customer cancels.")],
) -> Order:
    """Cancel an order that has not shipped yet; a paid order is refunded in full and its items restocked."""
    order = _order(state, order_id)
    require(order.status not in ("cancelled", "returned"), f"order '{order_id}' is already {order.status}",
            reason='conflict', rejected=(order_id, order.status))
    require(order.status not in ("shipped", "delivered"),
            f"order '{order_id}' is {order.status} and can no longer be cancelled; delivered orders "
            f"can be returned within {RETURN_WINDOW_DAYS} days with return_shop_order",
            rejected=(order_id, order.status, RETURN_WINDOW_DAYS))
    state.advance()
    order.refund_amount = order.total if order.status == "paid" else 0.0
    order.status, order.cancelled_at, order.cancel_reason = "cancelled", state.now, reason
    _restock(state, order)
    return order


@tool(write=True, sensitive=("order_id",))
def return_shop_order(
    state: ShopState,
    order_id: OrderId,
    reason: Annotated[ReturnReason, Field(description="Why the items go back; damaged or wrong items also get shipping refunded.")],
) -> Order:
    """Return a delivered order within 30 days of delivery; items are restocked and the refund recorded."""
    order = _order(state, order_id)
    require(order.status == "delivered",
            f"only delivered orders can be returned; order '{order_id}' is {order.status}",
            reason='state', rejected=(order_id, order.status), wanted=('delivered', 'returned'))
    assert order.delivered_at is not None
    days = (state.now_dt() - datetime.fromisoformat(order.delivered_at)).days
    require(days <= RETURN_WINDOW_DAYS,
            f"order '{order_id}' was delivered on {order.delivered_at[:10]}, {days} days ago; "
            f"returns are accepted within {RETURN_WINDOW_DAYS} days of delivery",
            rejected=(order_id, days, RETURN_WINDOW_DAYS))
    state.advance()
    full = reason in ("damaged", "wrong_item")
    order.refund_amount = order.total if full else round(order.total - order.shipping_fee, 2)
    order.status, order.returned_at, order.return_reason = "returned", state.now, reason
    _restock(state, order)
    return order


@tool(write=True, sensitive=("order_id", "shipping_address"))
def update_shipping_address(
    state: ShopState,
    order_id: OrderId,
    shipping_address: text("word", "New full delivery address, e.g. '12 Oak Street, Berlin'.", listed="shipping_address", example="12 Oak Street, Berlin", min_length=5, max_length=200),
) -> Order:
    """Change where an order will be delivered; only possible before it ships."""
    order = _order(state, order_id)
    require(order.status in ("pending", "paid"),
            f"order '{order_id}' is {order.status}; the shipping address can only be changed "
            "while an order is pending or paid",
            reason='state', rejected=(order_id, order.status), wanted=('pending', 'paid'))
    address = shipping_address.strip()
    require(len(address) >= 5, f"shipping_address must be a full address, got '{address}'",
            params=('shipping_address',), rejected=(address,))
    require(address != order.shipping_address, f"order '{order_id}' already ships to '{address}'",
            reason='conflict', rejected=(order_id, address))
    order.shipping_address = address
    return order


@tool(write=True, sensitive=("customer_id", "sku", "rating"))
def write_product_review(
    state: ShopState,
    customer_id: CustomerId,
    sku: Sku,
    rating: Annotated[int, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Stars from 1 (worst) to 5 (best).")],
    title: text("title", "Short headline of the review.", listed="title", min_length=1, max_length=120),
    body: text("body", "The review text.", listed="body", max_length=2000) = "",
) -> Review:
    """Publish a customer's review of a product they bought and received; the product's rating updates."""
    _customer(state, customer_id)
    product = _product(state, sku)
    require(bool(title.strip()), "title must not be blank", params=('title',))
    bought = sorted({ln.sku for o in state.orders.values()
                     if o.customer_id == customer_id and o.status in ("delivered", "returned") for ln in o.items})
    require(sku in bought, f"customer '{customer_id}' has no delivered order containing '{sku}'; only "
            f"purchased products can be reviewed. Delivered products: {known(bought)}",
            reason='state', rejected=(customer_id, sku), choices=shown(bought))
    dup = next((r for r in state.reviews.values() if r.customer_id == customer_id and r.sku == sku), None)
    require(dup is None, f"customer '{customer_id}' already reviewed '{sku}' "
            f"({dup.review_id if dup else ''}); one review per product",
            reason='conflict', rejected=(customer_id, sku))
    state.advance()
    review = Review(review_id=state.new_id("REV"), sku=sku, customer_id=customer_id, rating=rating,
                    title=title.strip(), body=body.strip(), created_at=state.now)
    state.reviews[review.review_id] = review
    stars = [r.rating for r in state.reviews.values() if r.sku == sku]
    product.rating, product.review_count = round(sum(stars) / len(stars), 2), len(stars)
    return review
