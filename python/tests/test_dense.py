"""Dense rewards (`Env(dense=True)`, docs/analytics.md): every reply scored
against the exact optimum; an episode's rewards sum to
`1[proven answer] - total regret`, the golden player's to 1.0."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

import kumo_gen
from kumo_gen import players


def episode(env: kumo_gen.Env, index: int, player: str, seed: int) -> Tuple[List[float], List[Dict[str, Any]]]:
    messages = env.reset(index)
    rewards: List[float] = []
    infos: List[Dict[str, Any]] = []
    done = False
    while not done:
        text = players.reply(player, env.task(index), messages, seed)["text"]
        _, reward, done, info = env.step(text)
        rewards.append(reward)
        infos.append(info)
        if not done:
            messages = env.messages()
    return rewards, infos


@pytest.mark.parametrize("player", ["golden", "random", "guess"])
def test_dense_rewards_sum_to_the_documented_total(player: str) -> None:
    env = kumo_gen.Env("medical", truths=6, actions=8, seed=3, n=12, dense=True)
    for index in range(len(env)):
        rewards, infos = episode(env, index, player, seed=index)
        moves = [i["move"] for i in infos]
        assert all(m is not None for m in moves)
        regret = sum(m["regret"] for m in moves)
        answers = [m for m in moves if m["answer"] is not None]
        proven = bool(answers) and answers[-1]["proven"]
        assert sum(rewards) == pytest.approx((1.0 if proven else 0.0) - regret, abs=1e-12)
        for reward, move in zip(rewards, moves):
            if move["action"] is not None:
                assert reward == -move["regret"]
                assert move["regret"] >= 0.0
        if player == "golden":
            assert proven and regret == 0.0 and sum(rewards) == 1.0
            assert all(m["optimal"] for m in moves)
            for info, move in zip(infos, moves):
                if move["action"] is not None:
                    assert move["action"] in info["optimal_actions"]
        if proven:
            assert answers[-1]["correct"]


def test_moves_state_gives_every_q_and_the_optimal_set() -> None:
    env = kumo_gen.Env("medical", truths=6, actions=8, seed=3, n=2, dense=True)
    env.reset(0)
    state = env.moves(0).state()
    assert len(state["q"]) == 8
    assert min(state["q"].values()) == state["value"]
    assert state["best"] in state["optimal"]
    assert state["optimal"] == [a for a in env.instance(0)["actions"] if state["q"][a] == state["value"]]
    assert env.moves(0).step("no such name") is None


def test_outcome_reward_is_unchanged_without_dense() -> None:
    env = kumo_gen.Env("medical", truths=6, actions=8, seed=3, n=2)
    env.reset(0)
    _, reward, _, info = env.step("<ANSWER> nothing </ANSWER>")
    assert reward == 0.0 and "move" not in info
