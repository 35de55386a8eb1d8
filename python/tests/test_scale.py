"""Bounded memory and work per episode (issue 55): a dense `Env` holds
the memo of the line it plays, not of every line it played; two `Env`s of
one line share it with the same rewards; the budget follows eval's rule;
a domain named at every call is compiled once per file."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

import kumo_gen


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    pytest.skip("no /proc/self/status")


def play_random(env: kumo_gen.Env, rng: random.Random) -> float:
    env.reset()
    instance = env.instance(env.index)
    total, done = 0.0, False
    while not done:
        names = instance["actions"] if rng.random() < 0.7 else instance["truths"]
        _, reward, done, _ = env.step(f"<ANSWER> {rng.choice(names)} </ANSWER>")
        total += reward
    return total


def test_a_dense_env_holds_the_memo_of_the_line_it_plays_only() -> None:
    # About 1.2 MB a line before: 400 new lines grew 500 MB.
    env = kumo_gen.Env("medical", 4, 6, n=400, dense=True)
    rng = random.Random(55)
    for _ in range(40):
        play_random(env, rng)
    before = rss_mb()
    for _ in range(360):
        play_random(env, rng)
    grew = rss_mb() - before
    assert grew < 40, f"RSS grew {grew:.1f} MB over 360 new lines"


def test_envs_of_one_line_share_its_memo_with_the_same_rewards() -> None:
    lines = kumo_gen.generate_lines("medical", 6, 8, n=3, seed=4)
    replies = []
    instance = kumo_gen.generate("medical", 6, 8, n=3, seed=4)[2]
    rng = random.Random(1)
    for _ in range(5):
        replies.append([f"<ANSWER> {rng.choice(instance['actions'])} </ANSWER>" for _ in range(3)]
                       + [f"<ANSWER> {instance['truths'][0]} </ANSWER>"])

    def rewards(env: kumo_gen.Env) -> list:
        out = []
        for script in replies:
            env.reset(2)
            for text in script:
                _, reward, done, _ = env.step(text)
                out.append(reward)
                if done:
                    break
        return out

    alone = rewards(kumo_gen.Env("medical", tasks=lines, dense=True))
    # A group of Envs of the line, alive at once (one memo), played in
    # turn: every reward bit for bit the lone Env's.
    group = [kumo_gen.Env("medical", tasks=lines, dense=True) for _ in range(4)]
    for env in group:
        env.reset(2)
    assert all(rewards(env) == alone for env in group)


def test_the_budget_follows_evals_rule() -> None:
    env = kumo_gen.Env("medical", 4, 6, n=1, budget=4)
    with pytest.raises(ValueError, match="at least the 4 truths"):
        env.reset(0)
    for bad in (0, 10_001):
        with pytest.raises(ValueError, match="max_steps"):
            kumo_gen.Env("medical", 4, 6, n=1, max_steps=bad)
    env = kumo_gen.Env("medical", 4, 6, n=1, budget=3)
    assert env.reset(0)


def test_a_domain_named_at_every_call_is_compiled_once(tmp_path: Path) -> None:
    kumo_gen.load_domain("medical")
    started = time.perf_counter()
    for _ in range(200):
        kumo_gen.load_domain("medical")
    # Compiling medical takes about 5 ms: 200 compilations 1 s.
    assert time.perf_counter() - started < 0.5
    # A file is compiled again when it changes.
    text = kumo_gen.family_yaml("rules3", seed=1)
    path = tmp_path / "fam.yaml"
    path.write_text(text)
    first = kumo_gen.load_domain(str(path))
    assert kumo_gen.load_domain(str(path)).source_hash == first.source_hash
    path.write_text(text.replace("title: ", "title: Edited ", 1))
    second = kumo_gen.load_domain(str(path))
    assert second.source_hash != first.source_hash
    assert second.title.startswith("Edited")
