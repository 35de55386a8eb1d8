"""Dense per-turn rewards from `kumo-gen serve` (`reset` with
`reward="dense"`, docs/analytics.md) through openenv-core's own client:
for the same replies on the same line they equal the Python
`kumo_gen.Env(dense=True)`'s (the one library definition), an episode's
sum is `1[proven answer] - total regret` (1.0 for the golden player), no
observation carries the values, and the default stays the 0/1 outcome."""

from __future__ import annotations

from typing import List, Tuple

import pytest

from conftest import DOMAIN, LINES, SPLIT, need

MISSING = ""
try:
    from openenv import GenericEnvClient

    import kumo_gen
    from kumo_gen import players
except ImportError as e:  # pragma: no cover - the CI venv has them
    GenericEnvClient = None
    MISSING = str(e)

VALUES_KEYS = {"optimal_actions", "candidates", "regret", "q", "value", "move"}


def in_process(line: dict, player: str, seed: int) -> Tuple[List[str], List[float], List[dict]]:
    """A player's replies on `line` through `kumo_gen.Env(dense=True)`: the
    replies, the rewards and the infos."""
    env = kumo_gen.Env(DOMAIN, tasks=[line], dense=True)
    messages = env.reset(0)
    texts, rewards, infos = [], [], []
    done = False
    while not done:
        text = players.reply(player, env.task(0), messages, seed)["text"]
        _, reward, done, info = env.step(text)
        texts.append(text)
        rewards.append(reward)
        infos.append(info)
        if not done:
            messages = env.messages()
    return texts, rewards, infos


def served(url: str, index: int, texts: List[str], **reset) -> List[float]:
    with GenericEnvClient(base_url=url).sync() as env:
        result = env.reset(split=SPLIT, index=index, model="dense", **reset)
        assert result.reward is None
        rewards = []
        for text in texts:
            assert not result.done
            result = env.step({"message": text})
            assert not VALUES_KEYS & set(result.observation)
            rewards.append(result.reward)
        assert result.done
        state = env.state()
        assert not VALUES_KEYS & set(state)
        assert state["reward"] == reset.get("reward", "outcome")
    return rewards


@pytest.mark.parametrize("player", ["golden", "random", "guess"])
def test_served_dense_rewards_equal_the_python_envs(start_server, instances, player: str) -> None:
    if GenericEnvClient is None:
        need(f"openenv-core or kumo_gen is not installed ({MISSING})")
    server = start_server()
    for index in range(LINES):
        texts, expected, infos = in_process(instances[index], player, seed=index)
        rewards = served(server.url, index, texts, reward="dense")
        assert rewards == pytest.approx(expected, abs=1e-12)
        moves = [i["move"] for i in infos if i["move"] is not None]
        answers = [m for m in moves if m["answer"] is not None]
        proven = 1.0 if answers and answers[-1]["proven"] else 0.0
        assert sum(rewards) == pytest.approx(proven - sum(m["regret"] for m in moves), abs=1e-12)
        if player == "golden":
            assert sum(rewards) == 1.0 and rewards[-1] == 1.0
        # The default is the outcome: 0 before the end, 1 for a success.
        outcome = served(server.url, index, texts)
        assert outcome[:-1] == [0.0] * (len(texts) - 1)
        assert outcome[-1] == (1.0 if infos[-1]["successful"] else 0.0)
    server.stop()
