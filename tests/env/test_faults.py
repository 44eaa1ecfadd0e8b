"""Faults: a worker killed mid-run loses no episode (clients replay their call logs)."""

from __future__ import annotations

import asyncio
import random
import signal

import psutil

from prove.env import Hub, load_registry
from prove.env.client import EnvClient
from prove.env.launch import EnvServer
from prove.env.sampling import ValuePool, random_calls

REG = load_registry()
SERVERS = sorted(REG.servers)


def test_killed_worker_is_restarted_and_every_episode_survives() -> None:
    n_episodes, per_episode = 40, 12
    reference = Hub()
    rng = random.Random(1)
    plans = []
    for i in range(n_episodes):
        server, seed = rng.choice(SERVERS), rng.randrange(2)
        reference.open(f"p{i}", seed)
        pool = ValuePool.of(reference, f"p{i}", server)
        plans.append((f"fault-{i}", seed, server,
                      random_calls(list(REG.server(server).tools), pool, random.Random(i), per_episode)))

    with EnvServer(workers=2) as server:
        supervisor = psutil.Process(server.proc.pid)

        async def run() -> list[tuple[str, int]]:
            async with EnvClient(server.urls, timeout=20) as env:
                done = 0

                async def one(eid: str, seed: int, srv: str, calls: list[dict]) -> tuple[str, int]:
                    nonlocal done
                    ep = env.episode(eid, seed=seed)
                    ep.reconnect_seconds = 120
                    for c in calls:
                        await ep.call(c["name"], c["arguments"])
                        done += 1
                        await asyncio.sleep(0.005)
                    return await ep.state_hash([srv]), ep.rebuilds

                async def killer() -> list[int]:
                    killed = []
                    for threshold in (n_episodes * per_episode // 4, n_episodes * per_episode // 2):
                        while done < threshold:
                            await asyncio.sleep(0.01)
                        victim = sorted(supervisor.children(), key=lambda p: p.pid)[len(killed) % 2]
                        victim.send_signal(signal.SIGKILL)
                        killed.append(victim.pid)
                    return killed

                kill_task = asyncio.create_task(killer())
                results = await asyncio.gather(*(one(*p) for p in plans))
                assert len(await kill_task) == 2
                return results

        results = asyncio.run(run())

    mismatches = []
    for (eid, seed, srv, calls), (digest, _) in zip(plans, results, strict=True):
        reference.open(eid, seed)
        for c in calls:
            reference.call(c["name"], c["arguments"], episode_id=eid)
        if reference.state_hash(eid, [srv]) != digest:
            mismatches.append(eid)
    assert mismatches == []
    assert sum(r for _, r in results) > 0, "no episode was rebuilt: the kill did not hit a live run"
