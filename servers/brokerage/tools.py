"""Brokerage tools: instruments and quotes, portfolios, trade orders, watchlists, alerts, cash."""

from __future__ import annotations

import difflib
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import ToolError, tool
from prove.env.types import (
    DEFAULT_LIMIT,
    MONEY,
    Limit,
    Offset,
    Page,
    day,
    entity_ids,
    measure,
    naming,
    parse_day,
    text,
)
from prove_servers.brokerage.state import (
    IRA_ANNUAL_LIMIT,
    PRICE_BAND,
    AccountId,
    AlertCondition,
    AlertStatus,
    AssetClass,
    BrokerageAccount,
    BrokerageState,
    Dividend,
    Instrument,
    Investor,
    InvestorId,
    OrderId,
    OrderSide,
    OrderStatus,
    OrderType,
    Position,
    PriceAlert,
    RiskProfile,
    Sector,
    Ticker,
    TimeInForce,
    TradeOrder,
    TradingStatus,
    Watchlist,
    WatchlistId,
    price_round,
)

Quantity = Annotated[float, Field(gt=0, le=1_000_000, description="Units to trade: whole shares for stocks, ETFs and bonds; up to 6 decimals for crypto.")]
Price = Annotated[float, Field(json_schema_extra=measure("money"), gt=0, le=10_000_000, description="Price per unit in USD.")]
Cash = Annotated[float, Field(json_schema_extra={MONEY: True}, gt=0, le=250_000, description="Amount in USD.")]


class InvestorHit(BaseModel):
    investor_id: InvestorId
    name: str = Field(json_schema_extra=naming("name"))
    email: str
    city: str
    risk_profile: RiskProfile
    account_ids: entity_ids("account", "Accounts owned or co-owned by the investor.")


class InvestorList(Page):
    investors: list[InvestorHit]


class PortfolioPosition(BaseModel):
    ticker: Ticker
    name: str = Field(json_schema_extra=naming("name"))
    asset_class: AssetClass
    quantity: float
    average_cost: float = Field(json_schema_extra={MONEY: True})
    price: float = Field(json_schema_extra={MONEY: True})
    market_value: float
    unrealized_gain: float
    unrealized_gain_pct: float


class Portfolio(BaseModel):
    account: BrokerageAccount
    withdrawable_cash: float = Field(description="Settled cash not reserved for open orders.")
    positions: list[PortfolioPosition]
    positions_value: float
    total_value: float = Field(json_schema_extra={MONEY: True}, description="Cash balance plus the market value of all positions.")
    open_orders: int


class InstrumentList(Page):
    instruments: list[Instrument]


class MarketQuote(BaseModel):
    ticker: Ticker
    name: str = Field(json_schema_extra=naming("name"))
    asset_class: AssetClass
    price: float = Field(json_schema_extra={MONEY: True})
    previous_close: float
    day_change: float
    day_change_pct: float
    trading_status: TradingStatus
    as_of: str


class TradeOrderList(Page):
    orders: list[TradeOrder]


class TradeResult(BaseModel):
    order: TradeOrder
    executed: bool = Field(description="True if it filled now; False if it rests as an open order.")
    amount: float = Field(json_schema_extra={MONEY: True}, description="Cost or proceeds if executed, else the buying power reserved.")
    cash_balance: float = Field(json_schema_extra={MONEY: True})
    buying_power: float


class WatchlistEntry(BaseModel):
    ticker: Ticker
    name: str = Field(json_schema_extra=naming("name"))
    price: float = Field(json_schema_extra={MONEY: True})
    day_change_pct: float


class WatchlistView(BaseModel):
    watchlist_id: WatchlistId
    investor_id: InvestorId
    name: str = Field(json_schema_extra=naming("name"))
    entries: list[WatchlistEntry]


class WatchlistList(Page):
    watchlists: list[WatchlistView]


class PriceAlertList(Page):
    alerts: list[PriceAlert]


class DividendList(Page):
    dividends: list[Dividend]
    total_amount: float = Field(json_schema_extra={MONEY: True}, description="Sum over all matching dividends, not just this page.")


class CashReceipt(BaseModel):
    account_id: AccountId
    amount: float = Field(json_schema_extra={MONEY: True})
    cash_balance: float = Field(json_schema_extra={MONEY: True})
    settled_cash: float
    buying_power: float
    timestamp: str


def _account(state: BrokerageState, account_id: str) -> BrokerageAccount:
    return find(state.accounts, account_id)


def _investor(state: BrokerageState, investor_id: str) -> Investor:
    return find(state.investors, investor_id, hint="use search_investors to find one")


def _instrument(state: BrokerageState, ticker: str) -> Instrument:
    symbol = ticker.strip().upper()
    inst = state.instruments.get(symbol)
    if inst is None:
        close = difflib.get_close_matches(symbol, list(state.instruments), n=3, cutoff=0.4)
        close += [t for t, i in state.instruments.items()
                  if symbol.lower() in i.name.lower() and t not in close][:3]
        tail = f"did you mean {', '.join(close)}? " if close else ""
        raise ToolError(f"unknown ticker '{ticker}' (parameter 'ticker'); {tail}"
                        "use search_instruments to look tickers up",
                        reason='not_found', params=('ticker',), rejected=(ticker, tail))
    return inst


def _watchlist(state: BrokerageState, watchlist_id: str) -> Watchlist:
    return find(state.watchlists, watchlist_id)


def _withdrawable(acc: BrokerageAccount) -> float:
    return round(max(0.0, min(acc.settled_cash, acc.buying_power)), 2)


def _holding(state: BrokerageState, account_id: str, ticker: str) -> Position | None:
    return next((p for p in state.positions.values() if p.account_id == account_id and p.ticker == ticker), None)


def _reserved(order: TradeOrder) -> float:
    """Buying power an open buy order holds back."""
    if order.status != "open" or order.side != "buy":
        return 0.0
    return round(order.quantity * (order.limit_price or order.stop_price or 0.0), 2)


def _fmt(x: float) -> str:
    return f"{x:,.2f}"


def _check_quantity(inst: Instrument, quantity: float) -> float:
    if inst.asset_class == "crypto":
        require(round(quantity, 6) > 0, "quantity must be at least 0.000001 for crypto",
                reason='limit', params=('quantity',))
        return round(quantity, 6)
    require(quantity == int(quantity), f"quantity must be a whole number for {inst.asset_class} "
            f"'{inst.ticker}' (fractional units only for crypto), got {quantity}",
            reason='state', params=('quantity',), rejected=(inst.asset_class, inst.ticker, quantity),
            wanted=('crypto',))
    return float(quantity)


def _check_prices(inst: Instrument, side: OrderSide, order_type: OrderType,
                  limit_price: float | None, stop_price: float | None) -> None:
    if order_type == "market":
        require(limit_price is None and stop_price is None,
                "market orders take no limit_price or stop_price; use order_type 'limit' or 'stop'",
                reason='limit', params=('limit', 'limit_price', 'order_type', 'stop_price'))
        require(inst.asset_class != "bond",
                f"bonds trade with limit orders only; place a limit order for '{inst.ticker}' "
                f"(last price {inst.price})",
                reason='limit', params=('limit',), rejected=(inst.ticker, inst.price))
        require(inst.trading_status == "trading",
                f"trading in '{inst.ticker}' is halted, so a market order cannot execute; place a limit "
                "order with time_in_force 'gtc' to queue it",
                reason='limit', params=('limit', 'time_in_force'), rejected=(inst.ticker,))
        return
    param, value = ("limit_price", limit_price) if order_type == "limit" else ("stop_price", stop_price)
    other = "stop_price" if order_type == "limit" else "limit_price"
    require(value is not None, f"{param} is required for a {order_type} order",
            reason='missing', params=(param,), rejected=(order_type,))
    require((stop_price if order_type == "limit" else limit_price) is None,
            f"{other} does not apply to a {order_type} order", rejected=(other, order_type))
    assert value is not None
    lo, hi = inst.price * (1 - PRICE_BAND), inst.price * (1 + PRICE_BAND)
    require(lo <= value <= hi, f"{param} {value} is more than {PRICE_BAND:.0%} away from the market "
            f"price {inst.price} of '{inst.ticker}'; allowed range {price_round(lo)}-{price_round(hi)}",
            reason='limit', params=(param,), rejected=(value, PRICE_BAND, inst.price, inst.ticker))
    if order_type == "stop":
        above = side == "buy"
        require(value > inst.price if above else value < inst.price,
                f"a {side} stop must be {'above' if above else 'below'} the market price "
                f"{inst.price} of '{inst.ticker}', got stop_price {value}",
                params=('stop_price',), rejected=(side, inst.price, inst.ticker, value))


def _executes_now(inst: Instrument, order: TradeOrder) -> bool:
    if inst.trading_status != "trading":
        return False
    if order.order_type == "market":
        return True
    if order.order_type == "limit" and order.limit_price is not None:
        return order.limit_price >= inst.price if order.side == "buy" else order.limit_price <= inst.price
    return False


def _cost(inst: Instrument, order: TradeOrder) -> float:
    """Cash a buy needs: the fill cost if it executes now, else what it reserves."""
    if _executes_now(inst, order):
        return round(order.quantity * inst.price, 2)
    return round(order.quantity * (order.limit_price or order.stop_price or 0.0), 2)


def _check_funds(state: BrokerageState, acc: BrokerageAccount, inst: Instrument, order: TradeOrder,
                 credit: float = 0.0) -> None:
    """Buy: enough buying power (plus `credit` released by the order being modified). Sell: enough units."""
    if order.side == "buy":
        need, have = _cost(inst, order), round(acc.buying_power + credit, 2)
        require(need <= have + 1e-9, f"insufficient buying power in '{acc.account_id}': {_fmt(have)} USD "
                f"available, this order needs {_fmt(need)} USD (short by {_fmt(need - have)})",
                reason='limit', rejected=(acc.account_id,))
        return
    pos = _holding(state, acc.account_id, inst.ticker)
    held = [p.ticker for p in state.positions.values() if p.account_id == acc.account_id]
    require(pos is not None, f"account '{acc.account_id}' holds no '{inst.ticker}'; it holds: {known(held)}",
            rejected=(acc.account_id, inst.ticker), choices=shown(held))
    assert pos is not None
    others = [o for o in state.orders.values() if o.account_id == acc.account_id and o.ticker == inst.ticker
              and o.side == "sell" and o.status == "open" and o.order_id != order.order_id]
    committed = sum(o.quantity for o in others)
    free = round(pos.quantity - committed, 6)
    detail = f", {committed:g} committed to open sell orders {', '.join(o.order_id for o in others)}" if others else ""
    require(order.quantity <= free + 1e-9, f"cannot sell {order.quantity:g} '{inst.ticker}' from "
            f"'{acc.account_id}': it holds {pos.quantity:g}{detail}; {free:g} available to sell",
            rejected=(order.quantity, inst.ticker, acc.account_id, pos.quantity, detail, free))


def _execute_or_rest(state: BrokerageState, acc: BrokerageAccount, inst: Instrument, order: TradeOrder) -> TradeResult:
    """Fill an open order at the market price if it can execute now, else reserve for it."""
    if not _executes_now(inst, order):
        amount = _reserved(order)
        acc.buying_power = round(acc.buying_power - amount, 2)
        return TradeResult(order=order, executed=False, amount=amount, cash_balance=acc.cash_balance,
                           buying_power=acc.buying_power)
    amount = round(order.quantity * inst.price, 2)
    pos = _holding(state, acc.account_id, inst.ticker)
    if order.side == "buy":
        acc.cash_balance = round(acc.cash_balance - amount, 2)
        acc.buying_power = round(acc.buying_power - amount, 2)
        acc.settled_cash = round(min(acc.settled_cash, acc.cash_balance), 2)
        if pos is None:
            pos = Position(position_id=state.new_id("POS"), account_id=acc.account_id, ticker=inst.ticker,
                           quantity=0.0, average_cost=0.0, opened_on=state.now[:10])
            state.positions[pos.position_id] = pos
        qty = round(pos.quantity + order.quantity, 6)
        pos.average_cost = price_round((pos.quantity * pos.average_cost + amount) / qty)
        pos.quantity = qty
    else:
        assert pos is not None
        acc.cash_balance = round(acc.cash_balance + amount, 2)
        acc.buying_power = round(acc.buying_power + amount, 2)
        pos.quantity = round(pos.quantity - order.quantity, 6)
        if pos.quantity <= 1e-9:
            del state.positions[pos.position_id]
    order.status, order.fill_price, order.updated_at = "filled", inst.price, state.now
    return TradeResult(order=order, executed=True, amount=amount, cash_balance=acc.cash_balance,
                       buying_power=acc.buying_power)


def _place(state: BrokerageState, side: OrderSide, account_id: str, ticker: str, quantity: float,
           order_type: OrderType, limit_price: float | None, stop_price: float | None,
           time_in_force: TimeInForce) -> TradeResult:
    acc = _account(state, account_id)
    require(acc.status == "active", f"account '{account_id}' is {acc.status} and cannot place orders",
            rejected=(account_id, acc.status))
    inst = _instrument(state, ticker)
    require(not (side == "buy" and acc.account_type == "ira" and inst.asset_class == "crypto"),
            f"crypto such as '{inst.ticker}' cannot be bought in IRA account '{account_id}'",
            rejected=(inst.ticker, account_id))
    qty = _check_quantity(inst, quantity)
    _check_prices(inst, side, order_type, limit_price, stop_price)
    order = TradeOrder(
        order_id="(new)", account_id=acc.account_id, ticker=inst.ticker, side=side, order_type=order_type,
        quantity=qty, limit_price=limit_price, stop_price=stop_price, time_in_force=time_in_force,
        status="open", created_at=state.now, updated_at=state.now,
    )
    _check_funds(state, acc, inst, order)
    state.advance()
    order.order_id, order.created_at, order.updated_at = state.new_id("TRD"), state.now, state.now
    state.orders[order.order_id] = order
    return _execute_or_rest(state, acc, inst, order)


@tool()
def search_investors(
    state: BrokerageState,
    query: text("query", "Case-insensitive substring of the name or email.", max_length=80, listed="name") = "",
    risk_profile: Annotated[RiskProfile | None, Field(description="Only investors with this risk profile.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> InvestorList:
    """Find investors by name or email, with the ids of the brokerage accounts they own."""
    q = query.strip().lower()
    found = [i for i in state.investors.values()
             if (q in i.name.lower() or q in i.email.lower())
             and (risk_profile is None or i.risk_profile == risk_profile)]
    return InvestorList.of(found, offset, limit, view=lambda i: InvestorHit(
        investor_id=i.investor_id, name=i.name, email=i.email, city=i.city, risk_profile=i.risk_profile,
        account_ids=[a.account_id for a in state.accounts.values() if i.investor_id in (a.investor_id, a.co_owner_id)],
    ))


@tool(sensitive=("account_id",))
def get_portfolio(
    state: BrokerageState,
    account_id: AccountId,
    asset_class: Annotated[AssetClass | None, Field(description="Only positions of this asset class.")] = None,
) -> Portfolio:
    """Get a brokerage account's cash, buying power and positions valued at current prices."""
    acc = _account(state, account_id)
    rows = []
    for p in state.positions.values():
        inst = state.instruments[p.ticker]
        if p.account_id != account_id or (asset_class is not None and inst.asset_class != asset_class):
            continue
        value, basis = round(p.quantity * inst.price, 2), p.quantity * p.average_cost
        rows.append(PortfolioPosition(
            ticker=p.ticker, name=inst.name, asset_class=inst.asset_class, quantity=p.quantity,
            average_cost=p.average_cost, price=inst.price, market_value=value,
            unrealized_gain=round(value - basis, 2),
            unrealized_gain_pct=round((value - basis) / basis * 100, 2) if basis else 0.0,
        ))
    total = round(sum(r.market_value for r in rows), 2)
    all_value = sum(p.quantity * state.instruments[p.ticker].price
                    for p in state.positions.values() if p.account_id == account_id)
    return Portfolio(
        account=acc, withdrawable_cash=_withdrawable(acc), positions=rows, positions_value=total,
        total_value=round(acc.cash_balance + all_value, 2),
        open_orders=sum(o.account_id == account_id and o.status == "open" for o in state.orders.values()),
    )


@tool()
def search_instruments(
    state: BrokerageState,
    query: text("query", "Case-insensitive substring of the ticker or name.", max_length=80, listed="name") = "",
    asset_class: Annotated[AssetClass | None, Field(description="Only this asset class.")] = None,
    sector: Annotated[Sector | None, Field(description="Only this sector.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> InstrumentList:
    """Search tradable instruments (stocks, ETFs, bonds, crypto) by ticker or name, class and sector."""
    q = query.strip().lower()
    found = [i for i in state.instruments.values()
             if (q in i.ticker.lower() or q in i.name.lower())
             and (asset_class is None or i.asset_class == asset_class)
             and (sector is None or i.sector == sector)]
    return InstrumentList.of(found, offset, limit)


@tool()
def get_market_quote(state: BrokerageState, ticker: Ticker) -> MarketQuote:
    """Get the current price, day change and trading status of one instrument."""
    i = _instrument(state, ticker)
    return MarketQuote(ticker=i.ticker, name=i.name, asset_class=i.asset_class, price=i.price,
                       previous_close=i.previous_close, day_change=i.day_change,
                       day_change_pct=i.day_change_pct, trading_status=i.trading_status, as_of=state.now)


@tool(sensitive=("account_id",))
def list_trade_orders(
    state: BrokerageState,
    account_id: AccountId,
    status: Annotated[OrderStatus | None, Field(description="Only orders in this status.")] = None,
    side: Annotated[OrderSide | None, Field(description="Only buy or only sell orders.")] = None,
    ticker: Annotated[Ticker | None, Field(description="Only orders for this ticker.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> TradeOrderList:
    """List an account's trade orders, newest first, filtered by status, side and ticker."""
    _account(state, account_id)
    symbol = _instrument(state, ticker).ticker if ticker is not None else None
    found = [o for o in reversed(state.orders.values())
             if o.account_id == account_id and (status is None or o.status == status)
             and (side is None or o.side == side) and (symbol is None or o.ticker == symbol)]
    return TradeOrderList.of(found, offset, limit)


@tool(sensitive=("order_id",))
def get_trade_order(state: BrokerageState, order_id: OrderId) -> TradeOrder:
    """Get one trade order by id: its terms, status and fill price."""
    return find(state.orders, order_id, hint="use list_trade_orders to find one")


@tool(write=True, sensitive=("account_id", "quantity", "limit_price", "stop_price"))
def place_buy_order(
    state: BrokerageState,
    account_id: AccountId,
    ticker: Ticker,
    quantity: Quantity,
    order_type: Annotated[OrderType, Field(description="market fills now at the last price; limit buys at or below limit_price; stop buys once the price rises to stop_price.")] = "market",
    limit_price: Annotated[Price | None, Field(description="Required for limit orders only.")] = None,
    stop_price: Annotated[Price | None, Field(description="Required for stop orders only.")] = None,
    time_in_force: Annotated[TimeInForce, Field(description="day: expires at the close; gtc: good till cancelled.")] = "day",
) -> TradeResult:
    """Buy a stock, ETF, bond or crypto in a brokerage account; needs enough buying power."""
    return _place(state, "buy", account_id, ticker, quantity, order_type, limit_price, stop_price, time_in_force)


@tool(write=True, sensitive=("account_id", "quantity", "limit_price", "stop_price"))
def place_sell_order(
    state: BrokerageState,
    account_id: AccountId,
    ticker: Ticker,
    quantity: Quantity,
    order_type: Annotated[OrderType, Field(description="market sells now at the last price; limit sells at or above limit_price; stop sells once the price falls to stop_price.")] = "market",
    limit_price: Annotated[Price | None, Field(description="Required for limit orders only.")] = None,
    stop_price: Annotated[Price | None, Field(description="Required for stop orders only.")] = None,
    time_in_force: Annotated[TimeInForce, Field(description="day: expires at the close; gtc: good till cancelled.")] = "day",
) -> TradeResult:
    """Sell units of a position held in a brokerage account; proceeds settle the next business day."""
    return _place(state, "sell", account_id, ticker, quantity, order_type, limit_price, stop_price, time_in_force)


@tool(write=True, sensitive=("order_id",))
def cancel_trade_order(state: BrokerageState, order_id: OrderId) -> TradeOrder:
    """Cancel an open trade order; a buy order's reserved buying power is released."""
    order = find(state.orders, order_id, hint="use list_trade_orders to find one")
    require(order.status == "open", f"order '{order_id}' is already {order.status}; only open orders can be cancelled",
            reason='state', rejected=(order_id, order.status), wanted=('open', 'cancelled'))
    acc = state.accounts[order.account_id]
    acc.buying_power = round(acc.buying_power + _reserved(order), 2)
    order.status, order.updated_at, order.note = "cancelled", state.now, "cancelled by investor"
    return order


@tool(write=True, sensitive=("order_id", "quantity", "limit_price", "stop_price"))
def modify_trade_order(
    state: BrokerageState,
    order_id: OrderId,
    quantity: Annotated[Quantity | None, Field(description="New quantity; omit to keep it.")] = None,
    limit_price: Annotated[Price | None, Field(description="New limit price (limit orders only).")] = None,
    stop_price: Annotated[Price | None, Field(description="New stop price (stop orders only).")] = None,
    time_in_force: Annotated[TimeInForce | None, Field(description="New time in force; omit to keep it.")] = None,
) -> TradeResult:
    """Change the quantity, price or time in force of an open order; it fills now if it becomes marketable."""
    order = find(state.orders, order_id, hint="use list_trade_orders to find one")
    require(order.status == "open", f"order '{order_id}' is {order.status}; only open orders can be modified",
            reason='state', rejected=(order_id, order.status), wanted=('open',))
    require(any(v is not None for v in (quantity, limit_price, stop_price, time_in_force)),
            "nothing to change: give quantity, limit_price, stop_price or time_in_force",
            reason='limit', params=('limit_price', 'quantity', 'stop_price', 'time_in_force'))
    require(limit_price is None or order.order_type == "limit",
            f"limit_price only applies to limit orders; '{order_id}' is a {order.order_type} order",
            reason='state', params=('limit', 'limit_price'), rejected=(order_id, order.order_type),
            wanted=('limit',))
    require(stop_price is None or order.order_type == "stop",
            f"stop_price only applies to stop orders; '{order_id}' is a {order.order_type} order",
            reason='state', params=('stop_price',), rejected=(order_id, order.order_type),
            wanted=('stop',))
    acc, inst = state.accounts[order.account_id], state.instruments[order.ticker]
    require(acc.status == "active", f"account '{acc.account_id}' is {acc.status}; its orders cannot be modified",
            rejected=(acc.account_id, acc.status))
    new = order.model_copy(update={
        "quantity": order.quantity if quantity is None else _check_quantity(inst, quantity),
        "limit_price": order.limit_price if limit_price is None else limit_price,
        "stop_price": order.stop_price if stop_price is None else stop_price,
        "time_in_force": time_in_force or order.time_in_force,
    })
    _check_prices(inst, new.side, new.order_type, new.limit_price, new.stop_price)
    _check_funds(state, acc, inst, new, credit=_reserved(order))
    state.advance()
    acc.buying_power = round(acc.buying_power + _reserved(order), 2)
    order.quantity, order.limit_price, order.stop_price = new.quantity, new.limit_price, new.stop_price
    order.time_in_force, order.updated_at = new.time_in_force, state.now
    return _execute_or_rest(state, acc, inst, order)


def _view(state: BrokerageState, wl: Watchlist) -> WatchlistView:
    entries = [WatchlistEntry(ticker=t, name=state.instruments[t].name, price=state.instruments[t].price,
                              day_change_pct=state.instruments[t].day_change_pct) for t in wl.tickers]
    return WatchlistView(watchlist_id=wl.watchlist_id, investor_id=wl.investor_id, name=wl.name, entries=entries)


@tool(sensitive=("investor_id",))
def list_watchlists(state: BrokerageState, investor_id: InvestorId, offset: Offset = 0,
                    limit: Limit = DEFAULT_LIMIT) -> WatchlistList:
    """List an investor's watchlists with the current price of every ticker on them, a page at a time."""
    _investor(state, investor_id)
    found = [w for w in state.watchlists.values() if w.investor_id == investor_id]
    return WatchlistList.of(found, offset, limit, view=lambda w: _view(state, w))


@tool(write=True, sensitive=("watchlist_id",))
def add_to_watchlist(state: BrokerageState, watchlist_id: WatchlistId, ticker: Ticker) -> WatchlistView:
    """Add an instrument to one of an investor's watchlists."""
    wl = _watchlist(state, watchlist_id)
    inst = _instrument(state, ticker)
    require(inst.ticker not in wl.tickers, f"'{inst.ticker}' is already on watchlist '{watchlist_id}' ({wl.name})",
            reason='conflict', rejected=(inst.ticker, watchlist_id))
    require(len(wl.tickers) < 50, f"watchlist '{watchlist_id}' is full (50 tickers); remove one first",
            rejected=(watchlist_id,))
    wl.tickers.append(inst.ticker)
    return _view(state, wl)


@tool(write=True, sensitive=("watchlist_id",))
def remove_from_watchlist(state: BrokerageState, watchlist_id: WatchlistId, ticker: Ticker) -> WatchlistView:
    """Remove an instrument from a watchlist."""
    wl = _watchlist(state, watchlist_id)
    symbol = ticker.strip().upper()
    require(symbol in wl.tickers, f"'{symbol}' is not on watchlist '{watchlist_id}'; it holds: {known(wl.tickers, 50)}",
            rejected=(symbol, watchlist_id), choices=shown(wl.tickers, 50))
    wl.tickers.remove(symbol)
    return _view(state, wl)


@tool(sensitive=("investor_id",))
def list_price_alerts(
    state: BrokerageState,
    investor_id: InvestorId,
    status: Annotated[AlertStatus | None, Field(description="Only alerts in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PriceAlertList:
    """List an investor's price alerts, a page at a time."""
    _investor(state, investor_id)
    found = [a for a in state.alerts.values()
             if a.investor_id == investor_id and (status is None or a.status == status)]
    return PriceAlertList.of(found, offset, limit)


@tool(write=True, sensitive=("investor_id", "target_price"))
def create_price_alert(
    state: BrokerageState,
    investor_id: InvestorId,
    ticker: Ticker,
    condition: Annotated[AlertCondition, Field(description="Notify when the price rises above or falls below the target.")],
    target_price: Price,
) -> PriceAlert:
    """Create an alert that notifies the investor when an instrument crosses a target price."""
    _investor(state, investor_id)
    inst = _instrument(state, ticker)
    target = price_round(target_price)
    dup = next((a for a in state.alerts.values() if a.investor_id == investor_id and a.status == "active"
                and a.ticker == inst.ticker and a.condition == condition and a.target_price == target), None)
    require(dup is None, f"alert '{dup.alert_id if dup else ''}' already exists for '{inst.ticker}' "
            f"{condition} {target}",
            reason='conflict',
            rejected=(dup.alert_id if dup else '', inst.ticker, condition, target))
    crossed = inst.price >= target if condition == "above" else inst.price <= target
    require(not crossed, f"'{inst.ticker}' already trades at {inst.price}, {condition} the target {target}; "
            f"choose a target_price {'above' if condition == 'above' else 'below'} {inst.price}",
            reason='conflict', params=('target_price',),
            rejected=(inst.ticker, inst.price, condition, target))
    alert = PriceAlert(alert_id=state.new_id("ALR"), investor_id=investor_id, ticker=inst.ticker,
                       condition=condition, target_price=target, status="active", created_at=state.now)
    state.alerts[alert.alert_id] = alert
    return alert


@tool(sensitive=("account_id",))
def get_dividend_history(
    state: BrokerageState,
    account_id: AccountId,
    ticker: Annotated[Ticker | None, Field(description="Only dividends from this ticker.")] = None,
    since: Annotated[day("Only paid on or after this date.") | None,
                     Field(description="Only paid on or after this date.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> DividendList:
    """List dividends and bond coupons paid into an account, newest first, with their total."""
    _account(state, account_id)
    symbol = _instrument(state, ticker).ticker if ticker is not None else None
    if since is not None:
        parse_day(since, "since")
    found = sorted((d for d in state.dividends.values()
                    if d.account_id == account_id and (symbol is None or d.ticker == symbol)
                    and (since is None or d.pay_date >= since)),
                   key=lambda d: (d.pay_date, d.dividend_id), reverse=True)
    return DividendList.of(found, offset, limit,
                           total_amount=round(sum(d.amount for d in found), 2))


@tool(write=True, sensitive=("account_id", "amount"))
def deposit_to_brokerage(state: BrokerageState, account_id: AccountId, amount: Cash) -> CashReceipt:
    """Deposit cash from the investor's linked bank; it is settled and can be invested at once."""
    acc = _account(state, account_id)
    amount = round(amount, 2)
    if acc.account_type == "ira":
        left = round(IRA_ANNUAL_LIMIT - acc.contributions_this_year, 2)
        require(amount <= left + 1e-9, f"IRA contribution limit: '{account_id}' can receive {_fmt(left)} USD more "
                f"this year (annual limit {_fmt(IRA_ANNUAL_LIMIT)}), requested {_fmt(amount)}",
                reason='limit', params=('limit',), rejected=(account_id,))
        acc.contributions_this_year = round(acc.contributions_this_year + amount, 2)
    state.advance()
    acc.cash_balance = round(acc.cash_balance + amount, 2)
    acc.settled_cash = round(acc.settled_cash + amount, 2)
    acc.buying_power = round(acc.buying_power + amount, 2)
    return CashReceipt(account_id=account_id, amount=amount, cash_balance=acc.cash_balance,
                       settled_cash=acc.settled_cash, buying_power=acc.buying_power, timestamp=state.now)


@tool(write=True, sensitive=("account_id", "amount"))
def withdraw_from_brokerage(state: BrokerageState, account_id: AccountId, amount: Cash) -> CashReceipt:
    """Withdraw settled cash to the investor's linked bank account."""
    acc = _account(state, account_id)
    amount = round(amount, 2)
    free = _withdrawable(acc)
    require(amount <= free + 1e-9, f"withdrawal exceeds settled cash in '{account_id}': {_fmt(free)} USD can be "
            f"withdrawn now (cash {_fmt(acc.cash_balance)}, settled {_fmt(acc.settled_cash)}, buying power "
            f"{_fmt(acc.buying_power)} after open orders), requested {_fmt(amount)}",
            reason='limit', rejected=(account_id,))
    state.advance()
    acc.cash_balance = round(acc.cash_balance - amount, 2)
    acc.settled_cash = round(acc.settled_cash - amount, 2)
    acc.buying_power = round(acc.buying_power - amount, 2)
    return CashReceipt(account_id=account_id, amount=amount, cash_balance=acc.cash_balance,
                       settled_cash=acc.settled_cash, buying_power=acc.buying_power, timestamp=state.now)
