"""Brokerage server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.brokerage import SERVER
from prove_servers.brokerage.state import (
    BrokerageAccount,
    BrokerageState,
    Dividend,
    Instrument,
    Investor,
    Position,
    PriceAlert,
    TradeOrder,
    Watchlist,
    initial_state,
)


def _inst(ticker: str, name: str, cls: str, sector: str, price: float, status: str = "trading") -> Instrument:
    return Instrument(ticker=ticker, name=name, asset_class=cls, sector=sector, price=price,
                      previous_close=price, day_change=0.0, day_change_pct=0.0, trading_status=status,
                      dividend_yield_pct=0.0)


def tiny() -> BrokerageState:
    s = BrokerageState(now="2026-03-16T10:30")
    for iid, name, risk in (("INV-0001", "Ada Chen", "aggressive"), ("INV-0002", "Bo Silva", "conservative")):
        s.investors[iid] = Investor(investor_id=iid, name=name, email=f"{name.split()[0].lower()}@x.com",
                                    phone="+1-555-100-1000", city="Berlin", risk_profile=risk, joined_on="2020-01-01")
    s.accounts["BRK-0001"] = BrokerageAccount(account_id="BRK-0001", investor_id="INV-0001", account_type="individual",
                                              status="active", cash_balance=10000.0, settled_cash=8000.0,
                                              buying_power=9000.0, opened_on="2020-01-01")
    s.accounts["BRK-0002"] = BrokerageAccount(account_id="BRK-0002", investor_id="INV-0002", account_type="ira",
                                              status="active", cash_balance=1000.0, settled_cash=1000.0,
                                              buying_power=1000.0, contributions_this_year=6500.0,
                                              opened_on="2021-01-01")
    s.accounts["BRK-0003"] = BrokerageAccount(account_id="BRK-0003", investor_id="INV-0002", co_owner_id="INV-0001",
                                              account_type="joint", status="restricted", cash_balance=50.0,
                                              settled_cash=50.0, buying_power=50.0, opened_on="2022-01-01")
    for inst in (_inst("ACMA", "Acme Analytics Inc.", "stock", "technology", 110.0),
                 _inst("HALT", "Halted Holdings", "stock", "industrials", 50.0, "halted"),
                 _inst("UST10Y", "US Treasury 10-Year Note", "bond", "government", 96.5),
                 _inst("BTC", "Bitcoin", "crypto", "digital_assets", 60000.0),
                 _inst("DIVY", "Dividend Leaders ETF", "etf", "broad_market", 54.0)):
        s.instruments[inst.ticker] = inst
    for pid, aid, ticker, qty, cost in (("POS-0001", "BRK-0001", "ACMA", 20.0, 90.0),
                                        ("POS-0002", "BRK-0001", "BTC", 0.5, 50000.0),
                                        ("POS-0003", "BRK-0002", "DIVY", 10.0, 50.0)):
        s.positions[pid] = Position(position_id=pid, account_id=aid, ticker=ticker, quantity=qty,
                                    average_cost=cost, opened_on="2025-01-02")
    base = dict(account_id="BRK-0001", ticker="ACMA", created_at="2026-03-01T10:00", updated_at="2026-03-01T10:00")
    s.orders["TRD-0001"] = TradeOrder(order_id="TRD-0001", side="buy", order_type="market", quantity=20.0,
                                      time_in_force="day", status="filled", fill_price=90.0, **base)
    s.orders["TRD-0002"] = TradeOrder(order_id="TRD-0002", side="buy", order_type="limit", quantity=10.0,
                                      limit_price=100.0, time_in_force="gtc", status="open", **base)
    s.orders["TRD-0003"] = TradeOrder(order_id="TRD-0003", side="sell", order_type="limit", quantity=5.0,
                                      limit_price=125.0, time_in_force="gtc", status="open", **base)
    s.watchlists["WL-0001"] = Watchlist(watchlist_id="WL-0001", investor_id="INV-0001", name="Ideas",
                                        tickers=["ACMA", "BTC"], created_at="2026-01-01T09:00")
    for did, date, amount in (("DIV-0001", "2025-12-15", 5.0), ("DIV-0002", "2026-03-13", 5.2)):
        s.dividends[did] = Dividend(dividend_id=did, account_id="BRK-0002", ticker="DIVY", per_share=amount / 10,
                                    quantity=10.0, amount=amount, pay_date=date)
    s.alerts["ALR-0001"] = PriceAlert(alert_id="ALR-0001", investor_id="INV-0001", ticker="ACMA", condition="above",
                                      target_price=130.0, status="active", created_at="2026-03-01T10:00")
    return s


hub = hub_fixture(SERVER, tiny)


def test_initial_state_is_rich_and_consistent() -> None:
    s = initial_state(3)
    assert len(s.instruments) == 34 and len(s.investors) >= 16 and len(s.orders) > 50
    assert {i.trading_status for i in s.instruments.values()} == {"trading", "halted"}
    for acc in s.accounts.values():  # buying power = cash minus what open buy orders reserve
        reserved = sum(o.quantity * o.limit_price for o in s.orders.values()
                       if o.account_id == acc.account_id and o.status == "open" and o.side == "buy")
        assert acc.buying_power == pytest.approx(acc.cash_balance - reserved, abs=0.02)
    assert s.new_id("TRD") == f"TRD-{len(s.orders) + 1:04d}"


def test_investors(hub: Hub) -> None:
    res = ok(hub, "search_investors", query="ada")
    assert res["total"] == 1 and res["investors"][0]["account_ids"] == ["BRK-0001", "BRK-0003"]
    assert ok(hub, "search_investors", risk_profile="conservative")["investors"][0]["investor_id"] == "INV-0002"
    page = ok(hub, "search_investors", limit=1)
    assert page["next_offset"] == 1 and page["total"] == 2
    fails(hub, "search_investors", "risk_profile", "conservative", risk_profile="yolo")


def test_portfolio(hub: Hub) -> None:
    p = ok(hub, "get_portfolio", account_id="BRK-0001")
    assert p["positions_value"] == 32200.0 and p["total_value"] == 42200.0
    assert p["withdrawable_cash"] == 8000.0 and p["open_orders"] == 2
    acma = p["positions"][0]
    assert acma["market_value"] == 2200.0 and acma["unrealized_gain"] == 400.0 and acma["unrealized_gain_pct"] == 22.22
    crypto = ok(hub, "get_portfolio", account_id="BRK-0001", asset_class="crypto")
    assert [x["ticker"] for x in crypto["positions"]] == ["BTC"] and crypto["total_value"] == 42200.0
    fails(hub, "get_portfolio", "account 'BRK-9' not found", "BRK-0001", account_id="BRK-9")


def test_instruments_and_quotes(hub: Hub) -> None:
    assert ok(hub, "search_instruments", asset_class="bond")["instruments"][0]["ticker"] == "UST10Y"
    assert ok(hub, "search_instruments", query="leaders")["instruments"][0]["ticker"] == "DIVY"
    assert ok(hub, "search_instruments", sector="technology")["total"] == 1
    page = ok(hub, "search_instruments", limit=2)
    assert page["next_offset"] == 2 and page["total"] == 5
    q = ok(hub, "get_market_quote", ticker="acma")
    assert q["price"] == 110.0 and q["as_of"] == "2026-03-16T10:30"
    assert ok(hub, "get_market_quote", ticker="HALT")["trading_status"] == "halted"
    fails(hub, "get_market_quote", "unknown ticker 'ACMX'", "did you mean ACMA", "search_instruments", ticker="ACMX")
    fails(hub, "get_market_quote", "did you mean BTC", ticker="bitcoin")


def test_orders_read(hub: Hub) -> None:
    res = ok(hub, "list_trade_orders", account_id="BRK-0001")
    assert [o["order_id"] for o in res["orders"]] == ["TRD-0003", "TRD-0002", "TRD-0001"]
    assert ok(hub, "list_trade_orders", account_id="BRK-0001", status="open")["total"] == 2
    assert ok(hub, "list_trade_orders", account_id="BRK-0001", side="sell")["orders"][0]["order_id"] == "TRD-0003"
    assert ok(hub, "list_trade_orders", account_id="BRK-0001", ticker="btc")["total"] == 0
    fails(hub, "list_trade_orders", "unknown ticker 'ZZZZZ'", account_id="BRK-0001", ticker="ZZZZZ")
    assert ok(hub, "get_trade_order", order_id="TRD-0001")["fill_price"] == 90.0
    fails(hub, "get_trade_order", "trade order 'TRD-77' not found", "list_trade_orders", order_id="TRD-77")


def test_market_buy_updates_cash_position_and_orders(hub: Hub) -> None:
    r = ok(hub, "place_buy_order", account_id="BRK-0001", ticker="ACMA", quantity=5)
    assert r["executed"] and r["amount"] == 550.0 and r["order"]["order_id"] == "TRD-0004"
    assert r["cash_balance"] == 9450.0 and r["buying_power"] == 8450.0
    p = ok(hub, "get_portfolio", account_id="BRK-0001")
    assert p["positions"][0]["quantity"] == 25.0 and p["positions"][0]["average_cost"] == 94.0
    assert p["account"]["settled_cash"] == 8000.0
    assert ok(hub, "get_trade_order", order_id="TRD-0004")["status"] == "filled"
    new = ok(hub, "place_buy_order", account_id="BRK-0001", ticker="DIVY", quantity=2, order_type="limit", limit_price=60)
    assert new["executed"] and new["order"]["fill_price"] == 54.0  # marketable limit fills at the market
    assert [x["ticker"] for x in ok(hub, "get_portfolio", account_id="BRK-0001")["positions"]] == ["ACMA", "BTC", "DIVY"]
    crypto = ok(hub, "place_buy_order", account_id="BRK-0001", ticker="BTC", quantity=0.0125)
    assert crypto["amount"] == 750.0


def test_resting_orders_reserve_buying_power(hub: Hub) -> None:
    r = ok(hub, "place_buy_order", account_id="BRK-0001", ticker="ACMA", quantity=10, order_type="limit",
           limit_price=100, time_in_force="gtc")
    assert not r["executed"] and r["amount"] == 1000.0 and r["buying_power"] == 8000.0 and r["cash_balance"] == 10000.0
    assert ok(hub, "list_trade_orders", account_id="BRK-0001", status="open")["total"] == 3
    stop = ok(hub, "place_buy_order", account_id="BRK-0001", ticker="ACMA", quantity=1, order_type="stop", stop_price=120)
    assert not stop["executed"] and stop["buying_power"] == 7880.0
    queued = ok(hub, "place_buy_order", account_id="BRK-0001", ticker="HALT", quantity=2, order_type="limit",
                limit_price=55, time_in_force="gtc")
    assert not queued["executed"] and queued["order"]["status"] == "open"  # halted: rests even if marketable


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"account_id": "BRK-0002", "ticker": "DIVY", "quantity": 20}, ("insufficient buying power", "1,000.00 USD available", "needs 1,080.00", "short by 80.00")),
        ({"account_id": "BRK-0003", "ticker": "ACMA", "quantity": 1}, ("is restricted",)),
        ({"account_id": "BRK-0002", "ticker": "BTC", "quantity": 0.001}, ("cannot be bought in IRA",)),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 1.5}, ("whole number", "only for crypto")),
        ({"account_id": "BRK-0001", "ticker": "ACME", "quantity": 1}, ("unknown ticker 'ACME'", "ACMA")),
        ({"account_id": "BRK-0001", "ticker": "UST10Y", "quantity": 1}, ("limit orders only",)),
        ({"account_id": "BRK-0001", "ticker": "HALT", "quantity": 1}, ("halted", "limit order")),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 1, "order_type": "limit", "limit_price": 80}, ("more than 20% away", "88.0-132.0")),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 1, "order_type": "stop", "stop_price": 100}, ("buy stop must be above",)),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 1, "limit_price": 100}, ("market orders take no limit_price",)),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 1, "order_type": "limit"}, ("limit_price is required",)),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 1, "order_type": "limit", "limit_price": 100, "stop_price": 99}, ("stop_price does not apply",)),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 1, "order_type": "trailing"}, ("order_type", "'market', 'limit' or 'stop'")),
        ({"account_id": "BRK-0001", "ticker": "ACMA", "quantity": 0}, ("quantity", "greater than 0")),
    ],
)
def test_buy_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "place_buy_order", *fragments, **args)


def test_sell(hub: Hub) -> None:
    r = ok(hub, "place_sell_order", account_id="BRK-0001", ticker="ACMA", quantity=10)
    assert r["executed"] and r["amount"] == 1100.0 and r["cash_balance"] == 11100.0 and r["buying_power"] == 10100.0
    p = ok(hub, "get_portfolio", account_id="BRK-0001")
    assert p["account"]["settled_cash"] == 8000.0 and p["positions"][0]["quantity"] == 10.0  # proceeds unsettled
    fails(hub, "place_sell_order", "cannot sell 6 'ACMA'", "holds 10", "5 committed", "TRD-0003", "5 available",
          account_id="BRK-0001", ticker="ACMA", quantity=6)
    fails(hub, "place_sell_order", "holds no 'DIVY'", "ACMA, BTC", account_id="BRK-0001", ticker="DIVY", quantity=1)
    ok(hub, "place_sell_order", account_id="BRK-0001", ticker="BTC", quantity=0.5)
    assert [x["ticker"] for x in ok(hub, "get_portfolio", account_id="BRK-0001")["positions"]] == ["ACMA"]
    stop = ok(hub, "place_sell_order", account_id="BRK-0001", ticker="ACMA", quantity=5, order_type="stop", stop_price=100)
    assert not stop["executed"] and stop["amount"] == 0.0
    fails(hub, "place_sell_order", "sell stop must be below", account_id="BRK-0001", ticker="ACMA", quantity=1,
          order_type="stop", stop_price=115)


def test_cancel(hub: Hub) -> None:
    order = ok(hub, "cancel_trade_order", order_id="TRD-0002")
    assert order["status"] == "cancelled"
    assert ok(hub, "get_portfolio", account_id="BRK-0001")["account"]["buying_power"] == 10000.0
    fails(hub, "cancel_trade_order", "already cancelled", order_id="TRD-0002")
    fails(hub, "cancel_trade_order", "already filled", "only open orders", order_id="TRD-0001")
    fails(hub, "cancel_trade_order", "trade order 'TRD-9' not found", order_id="TRD-9")
    ok(hub, "cancel_trade_order", order_id="TRD-0003")  # frees the 5 committed shares
    assert ok(hub, "place_sell_order", account_id="BRK-0001", ticker="ACMA", quantity=20)["executed"]


def test_modify(hub: Hub) -> None:
    r = ok(hub, "modify_trade_order", order_id="TRD-0002", quantity=20)
    assert not r["executed"] and r["buying_power"] == 8000.0 and r["order"]["quantity"] == 20.0
    fails(hub, "modify_trade_order", "insufficient buying power", "10,000.00 USD available", "short by 100.00",
          order_id="TRD-0002", quantity=101)
    fails(hub, "modify_trade_order", "stop_price only applies to stop orders", order_id="TRD-0002", stop_price=100)
    fails(hub, "modify_trade_order", "more than 20% away", order_id="TRD-0002", limit_price=50)
    fails(hub, "modify_trade_order", "nothing to change", order_id="TRD-0002")
    fails(hub, "modify_trade_order", "cannot sell 21", "20 available", order_id="TRD-0003", quantity=21)
    assert ok(hub, "modify_trade_order", order_id="TRD-0003", time_in_force="day")["order"]["time_in_force"] == "day"
    filled = ok(hub, "modify_trade_order", order_id="TRD-0002", limit_price=112)
    assert filled["executed"] and filled["amount"] == 2200.0 and filled["buying_power"] == 7800.0
    assert ok(hub, "get_trade_order", order_id="TRD-0002")["status"] == "filled"
    fails(hub, "modify_trade_order", "is filled", order_id="TRD-0002", quantity=1)


def test_watchlists(hub: Hub) -> None:
    wl = ok(hub, "list_watchlists", investor_id="INV-0001")["watchlists"][0]
    assert [e["ticker"] for e in wl["entries"]] == ["ACMA", "BTC"] and wl["entries"][0]["price"] == 110.0
    assert ok(hub, "list_watchlists", investor_id="INV-0002")["watchlists"] == []
    fails(hub, "list_watchlists", "investor 'INV-9' not found", "search_investors", investor_id="INV-9")
    assert [e["ticker"] for e in ok(hub, "add_to_watchlist", watchlist_id="WL-0001", ticker="divy")["entries"]][-1] == "DIVY"
    fails(hub, "add_to_watchlist", "'DIVY' is already on watchlist 'WL-0001'", watchlist_id="WL-0001", ticker="DIVY")
    fails(hub, "add_to_watchlist", "unknown ticker", watchlist_id="WL-0001", ticker="NOPE")
    fails(hub, "add_to_watchlist", "watchlist 'WL-5' not found", "WL-0001", watchlist_id="WL-5", ticker="ACMA")
    ok(hub, "remove_from_watchlist", watchlist_id="WL-0001", ticker="BTC")
    fails(hub, "remove_from_watchlist", "'BTC' is not on watchlist", "ACMA, DIVY", watchlist_id="WL-0001", ticker="BTC")
    wl = ok(hub, "list_watchlists", investor_id="INV-0001")["watchlists"][0]
    assert [e["ticker"] for e in wl["entries"]] == ["ACMA", "DIVY"]


def test_price_alerts(hub: Hub) -> None:
    assert ok(hub, "list_price_alerts", investor_id="INV-0001")["total"] == 1
    alert = ok(hub, "create_price_alert", investor_id="INV-0001", ticker="ACMA", condition="below", target_price=100)
    assert alert["alert_id"] == "ALR-0002" and alert["status"] == "active"
    fails(hub, "create_price_alert", "alert 'ALR-0001' already exists", investor_id="INV-0001", ticker="ACMA",
          condition="above", target_price=130)
    fails(hub, "create_price_alert", "already trades at 110.0", "above the target 100", investor_id="INV-0001",
          ticker="ACMA", condition="above", target_price=100)
    fails(hub, "create_price_alert", "below the target 120", investor_id="INV-0001", ticker="ACMA", condition="below",
          target_price=120)
    fails(hub, "create_price_alert", "condition", "'above' or 'below'", investor_id="INV-0001", ticker="ACMA",
          condition="equals", target_price=120)
    assert ok(hub, "list_price_alerts", investor_id="INV-0001", status="active")["total"] == 2
    assert ok(hub, "list_price_alerts", investor_id="INV-0001", status="triggered")["total"] == 0


def test_list_price_alerts_pages(hub: Hub) -> None:
    for target in (100, 120):
        ok(hub, "create_price_alert", investor_id="INV-0001", ticker="ACMA", condition="below" if target < 110
           else "above", target_price=target)
    first = ok(hub, "list_price_alerts", investor_id="INV-0001", limit=2)
    assert (first["total"], first["next_offset"], len(first["alerts"])) == (3, 2, 2)
    second = ok(hub, "list_price_alerts", investor_id="INV-0001", offset=first["next_offset"], limit=2)
    assert (second["total"], second["next_offset"]) == (3, None)
    every = [a["alert_id"] for a in ok(hub, "list_price_alerts", investor_id="INV-0001")["alerts"]]
    assert [a["alert_id"] for a in first["alerts"] + second["alerts"]] == every == ["ALR-0001", "ALR-0002", "ALR-0003"]


def test_dividends(hub: Hub) -> None:
    res = ok(hub, "get_dividend_history", account_id="BRK-0002")
    assert [d["dividend_id"] for d in res["dividends"]] == ["DIV-0002", "DIV-0001"] and res["total_amount"] == 10.2
    assert ok(hub, "get_dividend_history", account_id="BRK-0002", since="2026-01-01")["total"] == 1
    assert ok(hub, "get_dividend_history", account_id="BRK-0002", ticker="ACMA")["total"] == 0
    page = ok(hub, "get_dividend_history", account_id="BRK-0002", limit=1)
    assert page["next_offset"] == 1 and page["total_amount"] == 10.2
    fails(hub, "get_dividend_history", "since must be a date", account_id="BRK-0002", since="last year")


def test_deposits_and_withdrawals(hub: Hub) -> None:
    r = ok(hub, "deposit_to_brokerage", account_id="BRK-0001", amount=500)
    assert (r["cash_balance"], r["settled_cash"], r["buying_power"]) == (10500.0, 8500.0, 9500.0)
    fails(hub, "deposit_to_brokerage", "IRA contribution limit", "500.00 USD more", account_id="BRK-0002", amount=600)
    ok(hub, "deposit_to_brokerage", account_id="BRK-0002", amount=500)
    assert ok(hub, "get_portfolio", account_id="BRK-0002")["account"]["contributions_this_year"] == 7000.0
    fails(hub, "deposit_to_brokerage", "0.00 USD more", account_id="BRK-0002", amount=1)
    fails(hub, "deposit_to_brokerage", "amount", account_id="BRK-0001", amount=-5)
    ok(hub, "place_sell_order", account_id="BRK-0001", ticker="ACMA", quantity=10)  # +1100 unsettled
    fails(hub, "withdraw_from_brokerage", "exceeds settled cash", "8,500.00 USD can be withdrawn",
          account_id="BRK-0001", amount=9000)
    w = ok(hub, "withdraw_from_brokerage", account_id="BRK-0001", amount=8500)
    assert (w["cash_balance"], w["settled_cash"], w["buying_power"]) == (3100.0, 0.0, 2100.0)
    assert ok(hub, "get_portfolio", account_id="BRK-0001")["withdrawable_cash"] == 0.0
