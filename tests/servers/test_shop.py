"""Shop server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub, state_hash
from prove_servers.shop import SERVER
from prove_servers.shop.state import (
    Cart,
    CartLine,
    Coupon,
    Order,
    OrderLine,
    Product,
    Review,
    ShopCustomer,
    ShopState,
    initial_state,
)


def _order(oid: str, cid: str, status: str, sku: str, qty: int, price: float, **extra) -> Order:
    subtotal = qty * price
    fee = 0.0 if subtotal >= 50 else 4.99
    return Order(order_id=oid, customer_id=cid, status=status,
                 items=[OrderLine(sku=sku, name=f"item {sku}", quantity=qty, unit_price=price)],
                 subtotal=subtotal, shipping_fee=fee, total=round(subtotal + fee, 2),
                 shipping_method="standard", shipping_address="old address 1", estimated_delivery="2026-04-20",
                 **extra)


def tiny() -> ShopState:
    s = ShopState(now="2026-04-14T10:00")
    for cid, name, city, addr in (("SHC-0001", "Ada Chen", "Berlin", "1 Oak Street, Berlin"),
                                  ("SHC-0002", "Bo Silva", "Lisbon", "2 Mill Lane, Lisbon")):
        s.customers[cid] = ShopCustomer(customer_id=cid, name=name, email=f"{name.split()[0].lower()}@shop.com",
                                        city=city, address=addr, member_since="2024-01-01")
    for sku, name, cat, price, stock, rating, n in (
        ("SKU-0001", "Voltix Wireless Earbuds", "electronics", 40.0, 5, 4.0, 1),
        ("SKU-0002", "Copperleaf Electric Kettle", "kitchen", 30.0, 2, None, 0),
        ("SKU-0003", "Jollybox Plush Bear", "toys", 15.0, 0, None, 0),
        ("SKU-0004", "Peakform Yoga Mat", "sports", 25.0, 10, None, 0),
    ):
        s.products[sku] = Product(sku=sku, name=name, brand=name.split()[0], category=cat, price=price,
                                  stock=stock, rating=rating, review_count=n)
    for code, kind, value, min_order, expires, single, used in (
        ("WELCOME10", "percent", 10.0, 0.0, "2026-12-31", True, ["SHC-0002"]),
        ("SAVE20", "fixed", 20.0, 100.0, "2026-06-30", False, []),
        ("WINTER20", "percent", 20.0, 50.0, "2026-02-28", False, []),
    ):
        s.coupons[code] = Coupon(code=code, description=code, kind=kind, value=value, min_order=min_order,
                                 expires_on=expires, single_use=single, used_by=used)
    shipped = dict(carrier="UPS", tracking_number="1Z123", shipped_at="2026-04-13T08:00")
    s.orders["ORD-0001"] = _order("ORD-0001", "SHC-0001", "delivered", "SKU-0001", 1, 40.0, placed_at="2026-03-30T09:00",
                                  delivered_at="2026-04-04T12:00", **shipped)
    s.orders["ORD-0002"] = _order("ORD-0002", "SHC-0001", "delivered", "SKU-0004", 1, 25.0, placed_at="2026-02-10T09:00",
                                  delivered_at="2026-02-20T12:00", **shipped)
    s.orders["ORD-0003"] = _order("ORD-0003", "SHC-0002", "shipped", "SKU-0002", 1, 30.0, placed_at="2026-04-12T09:00",
                                  **shipped)
    s.orders["ORD-0004"] = _order("ORD-0004", "SHC-0002", "paid", "SKU-0004", 2, 25.0, placed_at="2026-04-13T09:00")
    s.orders["ORD-0005"] = _order("ORD-0005", "SHC-0001", "cancelled", "SKU-0004", 1, 25.0, placed_at="2026-04-01T09:00",
                                  cancelled_at="2026-04-01T10:00", cancel_reason="changed_mind")
    s.orders["ORD-0006"] = _order("ORD-0006", "SHC-0002", "pending", "SKU-0001", 1, 40.0, placed_at="2026-04-14T09:00")
    s.reviews["REV-0001"] = Review(review_id="REV-0001", sku="SKU-0001", customer_id="SHC-0001", rating=4,
                                   title="Good", body="Nice sound.", created_at="2026-04-05T10:00")
    s.carts["SHC-0002"] = Cart(customer_id="SHC-0002", items=[CartLine(sku="SKU-0001", quantity=2)])
    return s


hub = hub_fixture(SERVER, tiny)


def skus(result: dict, key: str = "products") -> list[str]:
    return [p["sku"] for p in result[key]]


def test_tool_inventory() -> None:
    writes = {t.name for t in SERVER.tools if t.write}
    assert len(SERVER.tools) == 17 and len(writes) == 8


def test_search_and_get_products(hub: Hub) -> None:
    assert skus(ok(hub, "search_products", query="KETTLE")) == ["SKU-0002"]
    assert skus(ok(hub, "search_products", query="voltix earbuds")) == ["SKU-0001"]
    assert skus(ok(hub, "search_products", category="toys")) == ["SKU-0003"]
    assert ok(hub, "search_products", in_stock_only=True)["total"] == 3
    assert skus(ok(hub, "search_products", min_price=20, max_price=35)) == ["SKU-0002", "SKU-0004"]
    assert skus(ok(hub, "search_products", sort_by="price_high_to_low"))[0] == "SKU-0001"
    assert skus(ok(hub, "search_products", sort_by="rating"))[0] == "SKU-0001"
    page = ok(hub, "search_products", limit=3)
    assert page["next_offset"] == 3 and page["total"] == 4
    assert ok(hub, "search_products", offset=3)["next_offset"] is None
    fails(hub, "search_products", "min_price (50.0) must not be greater than max_price (10.0)", min_price=50, max_price=10)
    fails(hub, "search_products", "category", "'electronics'", category="furniture")
    assert ok(hub, "get_product", sku="SKU-0003")["stock"] == 0
    fails(hub, "get_product", "product 'SKU-9' not found", "parameter 'sku'", "SKU-0001", sku="SKU-9")


def test_list_product_reviews(hub: Hub) -> None:
    res = ok(hub, "list_product_reviews", sku="SKU-0001")
    assert res["total"] == 1 and res["average_rating"] == 4.0 and res["reviews"][0]["review_id"] == "REV-0001"
    assert ok(hub, "list_product_reviews", sku="SKU-0001", min_rating=5)["total"] == 0
    fails(hub, "list_product_reviews", "product 'SKU-77' not found", sku="SKU-77")
    fails(hub, "list_product_reviews", "min_rating", min_rating=6, sku="SKU-0001")


def test_customers(hub: Hub) -> None:
    assert ok(hub, "search_shop_customers", query="ADA")["customers"][0]["customer_id"] == "SHC-0001"
    assert ok(hub, "search_shop_customers", query="bo@shop.com")["total"] == 1
    assert ok(hub, "search_shop_customers", city="lisbon")["customers"][0]["name"] == "Bo Silva"
    assert ok(hub, "search_shop_customers", query="nobody")["total"] == 0
    assert ok(hub, "get_shop_customer", customer_id="SHC-0002")["address"] == "2 Mill Lane, Lisbon"
    fails(hub, "get_shop_customer", "customer 'SHC-9' not found", "SHC-0001", customer_id="SHC-9")


def test_cart_add_and_view(hub: Hub) -> None:
    empty = ok(hub, "view_shopping_cart", customer_id="SHC-0001")
    assert empty["items"] == [] and empty["subtotal"] == 0.0
    assert ok(hub, "view_shopping_cart", customer_id="SHC-0002")["subtotal"] == 80.0
    fails(hub, "view_shopping_cart", "customer 'SHC-5' not found", customer_id="SHC-5")
    cart = ok(hub, "add_to_shopping_cart", customer_id="SHC-0001", sku="SKU-0004", quantity=2)
    assert cart["subtotal"] == 50.0
    ok(hub, "add_to_shopping_cart", customer_id="SHC-0001", sku="SKU-0004")
    cart = ok(hub, "view_shopping_cart", customer_id="SHC-0001")
    assert [(i["sku"], i["quantity"]) for i in cart["items"]] == [("SKU-0004", 3)] and cart["subtotal"] == 75.0


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"customer_id": "SHC-0001", "sku": "SKU-0003"}, ("'Jollybox Plush Bear' (SKU-0003) is out of stock",)),
        ({"customer_id": "SHC-0001", "sku": "SKU-0002", "quantity": 3}, ("only 2 of", "left in stock", "requested 3")),
        ({"customer_id": "SHC-0002", "sku": "SKU-0001", "quantity": 4}, ("only 5 of", "and 2 already in the cart")),
        ({"customer_id": "SHC-0001", "sku": "SKU-0099"}, ("product 'SKU-0099' not found", "sku")),
        ({"customer_id": "SHC-0009", "sku": "SKU-0001"}, ("customer 'SHC-0009' not found",)),
        ({"customer_id": "SHC-0001", "sku": "SKU-0001", "quantity": 0}, ("quantity", "greater than or equal to 1")),
    ],
)
def test_add_to_cart_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "add_to_shopping_cart", *fragments, **args)


def test_remove_from_cart(hub: Hub) -> None:
    assert ok(hub, "remove_from_shopping_cart", customer_id="SHC-0002", sku="SKU-0001", quantity=1)["subtotal"] == 40.0
    fails(hub, "remove_from_shopping_cart", "holds only 1 of 'SKU-0001'", customer_id="SHC-0002", sku="SKU-0001", quantity=2)
    fails(hub, "remove_from_shopping_cart", "'SKU-0004' is not in the cart", "SKU-0001",
          customer_id="SHC-0002", sku="SKU-0004")
    fails(hub, "remove_from_shopping_cart", "the cart holds: (none)", customer_id="SHC-0001", sku="SKU-0001")
    assert ok(hub, "remove_from_shopping_cart", customer_id="SHC-0002", sku="SKU-0001")["items"] == []
    assert ok(hub, "view_shopping_cart", customer_id="SHC-0002")["items"] == []


def test_coupons(hub: Hub) -> None:
    fails(hub, "apply_coupon_to_cart", "coupon code 'NOPE' not found", "parameter 'code'", customer_id="SHC-0002", code="nope")
    fails(hub, "apply_coupon_to_cart", "at least 100.00", "subtotal is 80.00", customer_id="SHC-0002", code="save20")
    fails(hub, "apply_coupon_to_cart", "expired on 2026-02-28", customer_id="SHC-0002", code="WINTER20")
    fails(hub, "apply_coupon_to_cart", "single-use", "'SHC-0002' has already used it", customer_id="SHC-0002", code="WELCOME10")
    fails(hub, "apply_coupon_to_cart", "cart of customer 'SHC-0001' is empty", customer_id="SHC-0001", code="WELCOME10")
    ok(hub, "add_to_shopping_cart", customer_id="SHC-0002", sku="SKU-0004")
    cart = ok(hub, "apply_coupon_to_cart", customer_id="SHC-0002", code=" save20 ")
    assert cart["coupon_code"] == "SAVE20" and cart["discount"] == 20.0 and cart["total_before_shipping"] == 85.0
    fails(hub, "apply_coupon_to_cart", "already applied", customer_id="SHC-0002", code="SAVE20")
    cart = ok(hub, "remove_from_shopping_cart", customer_id="SHC-0002", sku="SKU-0004")
    assert cart["coupon_code"] is None and "coupon 'SAVE20' removed" in cart["notice"]
    assert ok(hub, "view_shopping_cart", customer_id="SHC-0002")["discount"] == 0.0


def test_checkout_creates_order_and_takes_stock(hub: Hub) -> None:
    fails(hub, "checkout_shopping_cart", "cart of customer 'SHC-0001' is empty", customer_id="SHC-0001")
    ok(hub, "add_to_shopping_cart", customer_id="SHC-0001", sku="SKU-0002", quantity=2)
    ok(hub, "add_to_shopping_cart", customer_id="SHC-0001", sku="SKU-0004")
    ok(hub, "apply_coupon_to_cart", customer_id="SHC-0001", code="WELCOME10")
    fails(hub, "checkout_shopping_cart", "shipping_method", "'overnight'", customer_id="SHC-0001", shipping_method="drone")
    fails(hub, "checkout_shopping_cart", "must be a full address", customer_id="SHC-0001", shipping_address="     ")
    order = ok(hub, "checkout_shopping_cart", customer_id="SHC-0001", shipping_method="express",
               shipping_address="9 Park Row, Berlin")
    assert order["order_id"] == "ORD-0007" and order["status"] == "paid"
    assert (order["subtotal"], order["discount"], order["shipping_fee"], order["total"]) == (85.0, 8.5, 12.99, 89.49)
    assert order["shipping_address"] == "9 Park Row, Berlin" and order["placed_at"] == "2026-04-14T10:01"
    assert ok(hub, "get_product", sku="SKU-0002")["stock"] == 0
    assert ok(hub, "get_product", sku="SKU-0004")["stock"] == 9
    assert ok(hub, "view_shopping_cart", customer_id="SHC-0001")["items"] == []
    assert ok(hub, "list_shop_orders", customer_id="SHC-0001")["orders"][0]["order_id"] == "ORD-0007"
    assert ok(hub, "get_shop_order", order_id="ORD-0007")["coupon_code"] == "WELCOME10"
    ok(hub, "add_to_shopping_cart", customer_id="SHC-0001", sku="SKU-0004")
    fails(hub, "apply_coupon_to_cart", "single-use", customer_id="SHC-0001", code="WELCOME10")
    fails(hub, "add_to_shopping_cart", "out of stock", customer_id="SHC-0001", sku="SKU-0002")


def test_checkout_free_shipping_and_stock_race(hub: Hub) -> None:
    ok(hub, "add_to_shopping_cart", customer_id="SHC-0001", sku="SKU-0001", quantity=4)
    order = ok(hub, "checkout_shopping_cart", customer_id="SHC-0001")
    assert order["shipping_fee"] == 0.0 and order["total"] == 160.0
    assert order["shipping_address"] == "1 Oak Street, Berlin"
    fails(hub, "checkout_shopping_cart", "not enough stock", "(SKU-0001) has 1 left, the cart wants 2",
          customer_id="SHC-0002")


def test_list_and_get_orders(hub: Hub) -> None:
    res = ok(hub, "list_shop_orders", customer_id="SHC-0001")
    assert [o["order_id"] for o in res["orders"]] == ["ORD-0005", "ORD-0002", "ORD-0001"]
    assert ok(hub, "list_shop_orders", status="delivered")["total"] == 2
    page = ok(hub, "list_shop_orders", limit=4)
    assert page["next_offset"] == 4 and page["orders"][0]["order_id"] == "ORD-0006"
    assert ok(hub, "list_shop_orders", offset=4)["next_offset"] is None
    fails(hub, "list_shop_orders", "customer 'SHC-7' not found", customer_id="SHC-7")
    fails(hub, "list_shop_orders", "status", "'returned'", status="lost")
    assert ok(hub, "get_shop_order", order_id="ORD-0003")["status"] == "shipped"
    fails(hub, "get_shop_order", "order 'ORD-9' not found", "ORD-0001", order_id="ORD-9")


def test_listings_page_and_the_second_page_continues_the_first(hub: Hub) -> None:
    first = ok(hub, "list_shop_orders", limit=4)
    assert first["total"] == 6 and first["next_offset"] == 4
    second = ok(hub, "list_shop_orders", offset=first["next_offset"], limit=4)
    assert second["total"] == 6 and second["next_offset"] is None
    ids = [o["order_id"] for o in first["orders"] + second["orders"]]
    assert ids == ["ORD-0006", "ORD-0005", "ORD-0004", "ORD-0003", "ORD-0002", "ORD-0001"]
    customers = ok(hub, "search_shop_customers", limit=1)
    assert customers["total"] == 2 and customers["next_offset"] == 1
    rest = ok(hub, "search_shop_customers", offset=1, limit=1)
    assert [c["customer_id"] for c in customers["customers"] + rest["customers"]] == ["SHC-0001", "SHC-0002"]
    assert rest["next_offset"] is None


def test_track_shipment(hub: Hub) -> None:
    shipped = ok(hub, "track_shipment", order_id="ORD-0003")
    assert shipped["carrier"] == "UPS" and shipped["tracking_number"] == "1Z123" and len(shipped["events"]) == 2
    delivered = ok(hub, "track_shipment", order_id="ORD-0001")
    assert delivered["events"][-1]["event"].startswith("delivered to")
    assert ok(hub, "track_shipment", order_id="ORD-0004")["carrier"] is None
    fails(hub, "track_shipment", "was cancelled on 2026-04-01T10:00", "no shipment", order_id="ORD-0005")
    fails(hub, "track_shipment", "order 'ORD-0' not found", order_id="ORD-0")


def test_cancel_order(hub: Hub) -> None:
    order = ok(hub, "cancel_shop_order", order_id="ORD-0004", reason="found_better_price")
    assert order["status"] == "cancelled" and order["refund_amount"] == 50.0
    assert ok(hub, "get_product", sku="SKU-0004")["stock"] == 12
    assert ok(hub, "list_shop_orders", status="cancelled")["total"] == 2
    assert ok(hub, "cancel_shop_order", order_id="ORD-0006", reason="ordered_by_mistake")["refund_amount"] == 0.0
    fails(hub, "cancel_shop_order", "already cancelled", order_id="ORD-0004", reason="changed_mind")
    fails(hub, "cancel_shop_order", "is shipped and can no longer be cancelled", "return_shop_order",
          order_id="ORD-0003", reason="changed_mind")
    fails(hub, "cancel_shop_order", "is delivered", order_id="ORD-0001", reason="changed_mind")
    fails(hub, "cancel_shop_order", "reason", "'changed_mind'", order_id="ORD-0001", reason="bored")


@pytest.mark.parametrize(("reason", "refund"), [("no_longer_needed", 40.0), ("damaged", 44.99)])
def test_return_order(hub: Hub, reason: str, refund: float) -> None:
    order = ok(hub, "return_shop_order", order_id="ORD-0001", reason=reason)
    assert order["status"] == "returned" and order["refund_amount"] == refund
    assert ok(hub, "get_product", sku="SKU-0001")["stock"] == 6
    assert ok(hub, "track_shipment", order_id="ORD-0001")["events"][-1]["event"] == f"returned; refunded {refund:.2f}"


def test_return_failures(hub: Hub) -> None:
    fails(hub, "return_shop_order", "delivered on 2026-02-20, 52 days ago", "within 30 days",
          order_id="ORD-0002", reason="damaged")
    fails(hub, "return_shop_order", "only delivered orders can be returned", "is shipped",
          order_id="ORD-0003", reason="damaged")
    ok(hub, "return_shop_order", order_id="ORD-0001", reason="wrong_item")
    fails(hub, "return_shop_order", "is returned", order_id="ORD-0001", reason="wrong_item")


def test_update_shipping_address(hub: Hub) -> None:
    order = ok(hub, "update_shipping_address", order_id="ORD-0004", shipping_address="  5 Elm Court, Porto ")
    assert order["shipping_address"] == "5 Elm Court, Porto"
    assert ok(hub, "track_shipment", order_id="ORD-0004")["shipping_address"] == "5 Elm Court, Porto"
    fails(hub, "update_shipping_address", "already ships to", order_id="ORD-0004", shipping_address="5 Elm Court, Porto")
    fails(hub, "update_shipping_address", "is shipped", "pending or paid", order_id="ORD-0003",
          shipping_address="5 Elm Court, Porto")
    fails(hub, "update_shipping_address", "shipping_address", "at least 5 characters", order_id="ORD-0004",
          shipping_address="x")
    fails(hub, "update_shipping_address", "must be a full address", order_id="ORD-0004", shipping_address="      ")


def test_write_product_review(hub: Hub) -> None:
    review = ok(hub, "write_product_review", customer_id="SHC-0001", sku="SKU-0004", rating=2, title=" Thin ")
    assert review["review_id"] == "REV-0002" and review["title"] == "Thin"
    product = ok(hub, "get_product", sku="SKU-0004")
    assert product["rating"] == 2.0 and product["review_count"] == 1
    assert ok(hub, "list_product_reviews", sku="SKU-0004")["reviews"][0]["review_id"] == "REV-0002"
    fails(hub, "write_product_review", "already reviewed 'SKU-0001' (REV-0001)",
          customer_id="SHC-0001", sku="SKU-0001", rating=5, title="Again")
    fails(hub, "write_product_review", "'SHC-0002' has no delivered order containing 'SKU-0002'",
          "only purchased products", "(none)", customer_id="SHC-0002", sku="SKU-0002", rating=5, title="Nice")
    fails(hub, "write_product_review", "Delivered products: SKU-0001, SKU-0004",
          customer_id="SHC-0001", sku="SKU-0002", rating=5, title="Nice")
    fails(hub, "write_product_review", "title must not be blank",
          customer_id="SHC-0001", sku="SKU-0001", rating=5, title="  ")
    fails(hub, "write_product_review", "rating", "less than or equal to 5",
          customer_id="SHC-0001", sku="SKU-0004", rating=6, title="Nice")


def test_initial_state_is_seeded_and_consistent() -> None:
    a, b = initial_state(11), initial_state(11)
    assert state_hash(a) == state_hash(b) and state_hash(a) != state_hash(initial_state(12))
    assert len(a.customers) >= 20 and len(a.products) >= 30 and len(a.orders) >= 60
    assert a.new_id("ORD") not in a.orders and a.new_id("REV") not in a.reviews
    assert all(ln.sku in a.products for o in a.orders.values() for ln in o.items)
    assert all(o.customer_id in a.customers for o in a.orders.values())
    assert all(c.used_by == sorted(c.used_by) for c in a.coupons.values())
