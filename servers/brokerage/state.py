"""Brokerage server state: investors, accounts, instruments, positions, orders, watchlists, alerts."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, day, entity_id, entity_ids, naming
from prove.env.world import CITIES, days_before, email, money, person, phone

RiskProfile = Literal["conservative", "balanced", "aggressive"]
BrokerageAccountType = Literal["individual", "ira", "joint"]
BrokerageAccountStatus = Literal["active", "restricted"]
AssetClass = Literal["stock", "etf", "bond", "crypto"]
Sector = Literal[
    "technology", "healthcare", "financials", "energy", "consumer", "industrials",
    "communication", "real_estate", "utilities", "broad_market", "government", "corporate",
    "digital_assets",
]
TradingStatus = Literal["trading", "halted"]
OrderSide = Literal["buy", "sell"]
OrderType = Literal["market", "limit", "stop"]
OrderStatus = Literal["open", "filled", "cancelled", "rejected"]
TimeInForce = Literal["day", "gtc"]
AlertCondition = Literal["above", "below"]
AlertStatus = Literal["active", "triggered", "cancelled"]

IRA_ANNUAL_LIMIT = 7000.0
"""Most an IRA may receive in deposits per calendar year (USD)."""
PRICE_BAND = 0.20
"""Limit and stop prices must lie within this fraction of the market price."""

InvestorId = entity_id("investor", "Investor id, e.g. 'INV-0002'.", example="INV-0002")
AccountId = entity_id("account", "Brokerage account id, e.g. 'BRK-0003'.", example="BRK-0003")
Ticker = entity_id("instrument", "Instrument ticker, e.g. 'ACMA' or 'BTC'.", min_length=1, max_length=12, example="ACMA")
Tickers = entity_ids("instrument", "Instrument tickers.")
PositionId = entity_id("position", "Position id, e.g. 'POS-0012'.", example="POS-0012")
OrderId = entity_id("trade_order", "Trade order id, e.g. 'TRD-0042'.", example="TRD-0042")
WatchlistId = entity_id("watchlist", "Watchlist id, e.g. 'WL-0004'.", example="WL-0004")
DividendId = entity_id("dividend", "Dividend payment id, e.g. 'DIV-0007'.", example="DIV-0007")
AlertId = entity_id("price_alert", "Price alert id, e.g. 'ALR-0003'.", example="ALR-0003")


class Investor(Record):
    investor_id: InvestorId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    phone: str
    city: str
    risk_profile: RiskProfile
    joined_on: str


class BrokerageAccount(Record):
    account_id: AccountId
    investor_id: InvestorId = Field(description="Primary owner.")
    co_owner_id: InvestorId | None = Field(None, description="Second owner of a joint account.")
    account_type: BrokerageAccountType
    status: BrokerageAccountStatus = Field(description="Restricted accounts cannot place orders.")
    cash_balance: float = Field(json_schema_extra={MONEY: True}, description="All cash in the account, settled or not (USD).")
    settled_cash: float = Field(description="Cash from settled trades and deposits; withdrawable.")
    buying_power: float = Field(description="Cash not reserved for open buy orders (USD).")
    contributions_this_year: float = Field(0.0, description="IRA deposits this calendar year.")
    opened_on: str


class Instrument(Record):
    ticker: Ticker
    name: str = Field(json_schema_extra=naming("name"))
    asset_class: AssetClass
    sector: Sector
    price: float = Field(json_schema_extra={MONEY: True}, description="Last price in USD (fixed in this simulation).")
    previous_close: float
    day_change: float
    day_change_pct: float
    trading_status: TradingStatus
    dividend_yield_pct: float


class Position(Record):
    position_id: PositionId
    account_id: AccountId
    ticker: Ticker = Field(json_schema_extra=naming("name"))  # "the NWTR alert"
    quantity: float
    average_cost: float = Field(json_schema_extra={MONEY: True})
    opened_on: str


class TradeOrder(Record):
    order_id: OrderId
    account_id: AccountId
    ticker: Ticker = Field(json_schema_extra=naming("name"))  # "the NWTR alert"
    side: OrderSide
    order_type: OrderType
    quantity: float
    limit_price: float | None = Field(None, json_schema_extra={MONEY: True})
    stop_price: float | None = Field(None, json_schema_extra={MONEY: True})
    time_in_force: TimeInForce
    status: OrderStatus
    created_at: str
    updated_at: str
    fill_price: float | None = Field(None, json_schema_extra={MONEY: True})
    note: str = Field("", description="Why it was rejected or cancelled, if it was.")


class Watchlist(Record):
    watchlist_id: WatchlistId
    investor_id: InvestorId
    name: str = Field(json_schema_extra=naming("name"))
    tickers: Tickers
    created_at: str


class Dividend(Record):
    dividend_id: DividendId
    account_id: AccountId
    ticker: Ticker = Field(json_schema_extra=naming("name"))  # "the NWTR alert"
    per_share: float
    quantity: float
    amount: float = Field(json_schema_extra={MONEY: True})
    pay_date: day("Date the dividend or coupon was paid.")


class PriceAlert(Record):
    alert_id: AlertId
    investor_id: InvestorId
    ticker: Ticker = Field(json_schema_extra=naming("name"))  # "the NWTR alert"
    condition: AlertCondition
    target_price: float = Field(json_schema_extra={MONEY: True})
    status: AlertStatus
    created_at: str


class BrokerageState(ServerState):
    investors: dict[str, Investor] = Field(default_factory=dict)
    accounts: dict[str, BrokerageAccount] = Field(default_factory=dict)
    instruments: dict[str, Instrument] = Field(default_factory=dict, description="Keyed by ticker.")
    positions: dict[str, Position] = Field(default_factory=dict)
    orders: dict[str, TradeOrder] = Field(default_factory=dict)
    watchlists: dict[str, Watchlist] = Field(default_factory=dict)
    dividends: dict[str, Dividend] = Field(default_factory=dict)
    alerts: dict[str, PriceAlert] = Field(default_factory=dict)


# ticker, name, asset class, sector, typical price, dividend yield %
_CATALOG: tuple[tuple[str, str, AssetClass, Sector, float, float], ...] = (
    ("ACMA", "Acme Analytics Inc.", "stock", "technology", 142.0, 0.0),
    ("BRCH", "Birchwood Labs Corp.", "stock", "healthcare", 58.0, 1.1),
    ("CBLT", "Cobalt Systems Inc.", "stock", "technology", 311.0, 0.6),
    ("DRFT", "Driftwood Media Group", "stock", "communication", 24.0, 0.0),
    ("EVGF", "Evergreen Foods Co.", "stock", "consumer", 47.0, 2.8),
    ("FJRD", "Fjord Logistics AG", "stock", "industrials", 88.0, 1.9),
    ("GRNH", "Granite Health Inc.", "stock", "healthcare", 173.0, 1.4),
    ("HRBF", "Harbor Finance Corp.", "stock", "financials", 66.0, 3.6),
    ("IONE", "Ionic Energy Ltd.", "stock", "energy", 39.0, 4.2),
    ("JUNR", "Juniper Retail Inc.", "stock", "consumer", 21.0, 0.0),
    ("KSTL", "Kestrel Aviation Corp.", "stock", "industrials", 119.0, 0.9),
    ("LMNS", "Lumen Studios Inc.", "stock", "communication", 15.0, 0.0),
    ("MRDL", "Meridian Legal Services", "stock", "industrials", 52.0, 2.1),
    ("NWTR", "Northwind Traders Co.", "stock", "consumer", 76.0, 1.7),
    ("ORCB", "Orchid Bio Therapeutics", "stock", "healthcare", 9.4, 0.0),
    ("PNCL", "Pinnacle Sports Brands", "stock", "consumer", 33.0, 1.2),
    ("QRTZ", "Quartz Robotics Inc.", "stock", "technology", 204.0, 0.0),
    ("RDWD", "Redwood Realty Trust", "stock", "real_estate", 41.0, 5.1),
    ("SMTO", "Summit Outdoors Inc.", "stock", "consumer", 28.0, 0.8),
    ("TDLW", "Tidal Water Utilities", "stock", "utilities", 61.0, 3.9),
    ("TMKT", "Total Market Index ETF", "etf", "broad_market", 248.0, 1.4),
    ("GTEC", "Global Technology ETF", "etf", "technology", 97.0, 0.5),
    ("DIVY", "Dividend Leaders ETF", "etf", "broad_market", 54.0, 3.8),
    ("GRNE", "Clean Energy ETF", "etf", "energy", 31.0, 1.0),
    ("HLTX", "Healthcare Select ETF", "etf", "healthcare", 82.0, 1.5),
    ("EMKT", "Emerging Markets ETF", "etf", "broad_market", 43.0, 2.4),
    ("UST2Y", "US Treasury 2-Year Note", "bond", "government", 99.2, 4.3),
    ("UST10Y", "US Treasury 10-Year Note", "bond", "government", 96.5, 4.1),
    ("MUNI5", "Municipal Bond 5-Year", "bond", "government", 101.3, 3.0),
    ("CORP7", "Investment-Grade Corporate 7-Year", "bond", "corporate", 98.1, 5.2),
    ("BTC", "Bitcoin", "crypto", "digital_assets", 68000.0, 0.0),
    ("ETH", "Ether", "crypto", "digital_assets", 3500.0, 0.0),
    ("SOL", "Solana", "crypto", "digital_assets", 150.0, 0.0),
    ("DOGE", "Dogecoin", "crypto", "digital_assets", 0.16, 0.0),
)

_WATCHLIST_NAMES = ("Tech ideas", "Dividend picks", "Long term", "Crypto", "Earnings week", "Watch")


def price_round(price: float) -> float:
    """Round a price: 4 decimals under 1 USD, otherwise cents."""
    return round(price, 4 if price < 1 else 2)


def initial_state(seed: int) -> BrokerageState:
    """A brokerage with 34 instruments, ~22 investors, ~40 accounts and their history."""
    rng = random.Random(seed)
    now = "2026-03-16T10:30"
    state = BrokerageState(now=now)
    for ticker, name, cls, sector, base, yld in _CATALOG:
        price = price_round(base * rng.uniform(0.85, 1.15))
        prev = price_round(price / (1 + rng.uniform(-0.04, 0.04)))
        state.instruments[ticker] = Instrument(
            ticker=ticker, name=name, asset_class=cls, sector=sector, price=price,
            previous_close=prev, day_change=price_round(price - prev),
            day_change_pct=round((price - prev) / prev * 100, 2),
            trading_status="trading", dividend_yield_pct=yld,
        )
    for ticker in rng.sample([t for t, _, cls, *_ in _CATALOG if cls == "stock"], 2):
        state.instruments[ticker].trading_status = "halted"
    tickers = list(state.instruments)
    inv_id, acc_id, pos_id, ord_id = Counter("INV"), Counter("BRK"), Counter("POS"), Counter("TRD")
    wl_id, div_id, alr_id = Counter("WL"), Counter("DIV"), Counter("ALR")
    investor_ids: list[str] = []
    for _ in range(rng.randrange(16, 23)):
        name = person(rng)
        iid = inv_id()
        investor_ids.append(iid)
        state.investors[iid] = Investor(
            investor_id=iid, name=name, email=email(name, "invest.example.com"), phone=phone(rng),
            city=rng.choice(CITIES), risk_profile=rng.choice(["conservative", "balanced", "aggressive"]),
            joined_on=days_before(now, rng, 3000, 90)[:10],
        )
        kinds = ["individual", *rng.sample(["ira", "joint"], rng.randrange(0, 3))]
        for kind in kinds:
            aid = acc_id()
            cash = money(rng, 200, 40000)
            co_owner = rng.choice(investor_ids[:-1]) if kind == "joint" and len(investor_ids) > 1 else None
            state.accounts[aid] = BrokerageAccount(
                account_id=aid, investor_id=iid, co_owner_id=co_owner,
                account_type="individual" if kind == "joint" and co_owner is None else kind,
                status=rng.choices(["active", "restricted"], weights=[14, 1])[0],
                cash_balance=cash, settled_cash=round(cash - money(rng, 0, min(cash, 1500)), 2),
                buying_power=cash, opened_on=days_before(now, rng, 2500, 60)[:10],
                contributions_this_year=money(rng, 0, 6500) if kind == "ira" else 0.0,
            )
            pool = [t for t in tickers if kind != "ira" or state.instruments[t].asset_class != "crypto"]
            for ticker in rng.sample(pool, rng.randrange(2, 7)):
                inst = state.instruments[ticker]
                qty = round(rng.uniform(0.01, 2.5), 4) if inst.asset_class == "crypto" else float(rng.randrange(1, 120))
                pid = pos_id()
                opened = days_before(now, rng, 900, 20)
                state.positions[pid] = Position(
                    position_id=pid, account_id=aid, ticker=ticker, quantity=qty,
                    average_cost=price_round(inst.price * rng.uniform(0.6, 1.3)), opened_on=opened[:10],
                )
                if inst.dividend_yield_pct > 0:
                    per_share = round(inst.price * inst.dividend_yield_pct / 400, 4)
                    for pay_date in ("2025-12-15", "2026-03-13"):
                        if pay_date > opened[:10]:
                            did = div_id()
                            state.dividends[did] = Dividend(
                                dividend_id=did, account_id=aid, ticker=ticker, per_share=per_share,
                                quantity=qty, amount=round(per_share * qty, 2), pay_date=pay_date,
                            )
                if rng.random() < 0.6:
                    oid = ord_id()
                    created = days_before(now, rng, 400, 1)
                    fill = price_round(inst.price * rng.uniform(0.7, 1.1))
                    status = rng.choices(["filled", "cancelled", "rejected"], weights=[8, 2, 1])[0]
                    kind = "limit" if inst.asset_class == "bond" else rng.choice(["market", "limit"])
                    state.orders[oid] = TradeOrder(
                        order_id=oid, account_id=aid, ticker=ticker, side=rng.choice(["buy", "sell"]),
                        order_type=kind,
                        quantity=qty if inst.asset_class == "crypto" else float(rng.randrange(1, 40)),
                        limit_price=fill if kind == "limit" else None,
                        time_in_force=rng.choice(["day", "gtc"]), status=status,
                        created_at=created, updated_at=created,
                        fill_price=fill if status == "filled" else None,
                        note={"cancelled": "cancelled by investor", "rejected":
                              "rejected: insufficient buying power"}.get(status, ""),
                    )
            # One resting limit buy below the market on some accounts: it reserves buying power.
            acc = state.accounts[aid]
            inst = state.instruments[rng.choice([t for t in pool if state.instruments[t].asset_class != "crypto"])]
            if rng.random() < 0.5 and acc.status == "active":
                limit = price_round(inst.price * rng.uniform(0.85, 0.97))
                qty = float(max(1, int(min(acc.buying_power * 0.3, 3000) // limit)))
                oid = ord_id()
                created = days_before(now, rng, 20, 0)
                state.orders[oid] = TradeOrder(
                    order_id=oid, account_id=aid, ticker=inst.ticker, side="buy", order_type="limit",
                    quantity=qty, limit_price=limit, time_in_force="gtc", status="open",
                    created_at=created, updated_at=created,
                )
                acc.buying_power = round(acc.buying_power - qty * limit, 2)
        if rng.random() < 0.7:
            wid = wl_id()
            state.watchlists[wid] = Watchlist(
                watchlist_id=wid, investor_id=iid, name=rng.choice(_WATCHLIST_NAMES),
                tickers=rng.sample(tickers, rng.randrange(2, 7)), created_at=days_before(now, rng, 300, 5),
            )
        for _ in range(rng.randrange(0, 3)):
            inst = state.instruments[rng.choice(tickers)]
            cond = rng.choice(["above", "below"])
            target = price_round(inst.price * (rng.uniform(1.03, 1.2) if cond == "above" else rng.uniform(0.8, 0.97)))
            aid_ = alr_id()
            state.alerts[aid_] = PriceAlert(
                alert_id=aid_, investor_id=iid, ticker=inst.ticker, condition=cond, target_price=target,
                status=rng.choices(["active", "triggered", "cancelled"], weights=[6, 2, 1])[0],
                created_at=days_before(now, rng, 120, 1),
            )
    state.orders = dict(sorted(state.orders.items(), key=lambda kv: kv[1].created_at))
    return state
