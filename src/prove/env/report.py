"""Tables and figures about the environment library for 01_servers: inventory and a live demo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from prove.env.hub import Hub
from prove.env.registry import Registry

__all__ = [
    "inventory_frame", "server_summary", "plot_inventory", "demo_plan", "state_dependence_demo",
    "state_dependence_over_http",
]


def inventory_frame(registry: Registry) -> pd.DataFrame:
    """One row per tool: server, family, tool, kind (read/write), #params, sensitive params."""
    return pd.DataFrame(registry.inventory())


def server_summary(inventory: pd.DataFrame) -> pd.DataFrame:
    """Servers x (family, tools, reads, writes, tools with sensitive parameters), plus a total row."""
    g = inventory.groupby(["family", "server"], sort=True)
    out = pd.DataFrame({
        "tools": g.size(),
        "read": g["kind"].apply(lambda k: int((k == "read").sum())),
        "write": g["kind"].apply(lambda k: int((k == "write").sum())),
        "with_sensitive": g["sensitive"].apply(lambda s: int((s != "").sum())),
    }).reset_index()
    total = pd.DataFrame([{"family": "all", "server": f"{len(out)} servers",
                           **{c: int(out[c].sum()) for c in ("tools", "read", "write", "with_sensitive")}}])
    return pd.concat([out, total], ignore_index=True)


def plot_inventory(summary: pd.DataFrame, path: str | Path) -> Path:
    """Stacked read/write bars per server, grouped and coloured by family."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary[summary["family"] != "all"]
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(rows) + 2), 4))
    x = range(len(rows))
    ax.bar(x, rows["read"], label="read", color="#4c72b0")
    ax.bar(x, rows["write"], bottom=rows["read"], label="write", color="#dd8452")
    ax.set_xticks(list(x), [f"{s}\n({f})" for s, f in zip(rows["server"], rows["family"], strict=True)],
                  rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("tools")
    n_tools = int(rows["tools"].sum())
    ax.set_title(f"PROVE environment library: {len(rows)} servers, {n_tools} tools")
    ax.set_ylim(0, float(rows["tools"].max()) * 1.3)
    ax.legend(ncol=2, loc="upper left")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _pick_accounts(hub: Hub, episode: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    accounts = hub.state(episode, "banking")["accounts"].values()
    usable = [a for a in accounts if a["status"] == "active" and a["account_type"] != "credit"]
    for src in usable:
        if 0 < src["balance"] < src["daily_transfer_limit"] / 1.3:
            for dst in usable:
                if dst["account_id"] != src["account_id"] and dst["currency"] == src["currency"]:
                    return src, dst
    return None


def demo_plan(seed: int, hub: Hub | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(episode, call) steps: A and B of one seed make the same transfer; A makes it twice.

    The amount is 60% of the source balance, so A's second transfer fails (insufficient funds)
    while B's first succeeds: same call, same seed, different outcome because of A's prior write.
    """
    hub = hub if hub is not None else Hub()
    probe = f"demo-probe-{seed}"
    hub.open(probe, seed)
    picked = _pick_accounts(hub, probe)
    hub.close(probe)
    if picked is None:
        raise ValueError(f"seed {seed} has no account pair for the demo; try another seed")
    src, dst = picked
    write = {"name": "transfer_funds",
             "arguments": {"from_account_id": src["account_id"], "to_account_id": dst["account_id"],
                           "amount": round(src["balance"] * 0.6, 2)}}
    return [("A", write), ("A", write), ("B", write)]


def _row(episode: str, call: dict[str, Any], out: dict[str, Any], digest: str) -> dict[str, Any]:
    result = out.get("result") or {}
    return {
        "episode": episode,
        "call": f"{call['name']}({', '.join(f'{k}={v}' for k, v in call['arguments'].items())})",
        "ok": out["ok"],
        "outcome": f"from_balance={result['from_balance']}" if "from_balance" in result
        else out.get("error", "ok"),
        "state_hash": digest[:12],
    }


def state_dependence_demo(hub: Hub, seed: int, plan: list | None = None) -> pd.DataFrame:
    """Run `demo_plan` in-process; one row per step with the episode's banking hash after it."""
    plan = plan if plan is not None else demo_plan(seed, hub)
    rows = []
    for ep in ("A", "B"):
        hub.open(ep, seed)
        rows.append({"episode": ep, "call": "(opened)", "ok": True, "outcome": "seeded initial state",
                     "state_hash": hub.state_hash(ep, ["banking"])[:12]})
    for ep, call in plan:
        out = hub.call(call["name"], call["arguments"], episode_id=ep)
        rows.append(_row(ep, call, out, hub.state_hash(ep, ["banking"])))
    for ep in ("A", "B"):
        hub.close(ep)
    return pd.DataFrame(rows)


async def state_dependence_over_http(url: str, seed: int, plan: list) -> pd.DataFrame:
    """The same plan through `prove serve` at `url` (episodes named http-A, http-B)."""
    from prove.env.client import EnvClient

    rows = []
    async with EnvClient(url) as env:
        for ep in ("A", "B"):
            await env.open(f"http-{ep}", seed)
            rows.append({"episode": ep, "call": "(opened)", "ok": True,
                         "outcome": "seeded initial state",
                         "state_hash": (await env.state_hash(f"http-{ep}", ["banking"]))[:12]})
        for ep, call in plan:
            out = await env.call(call["name"], call["arguments"], episode_id=f"http-{ep}", seed=seed)
            rows.append(_row(ep, call, out, await env.state_hash(f"http-{ep}", ["banking"])))
        for ep in ("A", "B"):
            await env.close(f"http-{ep}")
    return pd.DataFrame(rows)
