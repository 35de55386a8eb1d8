"""TRL's `environment_factory` contract (TRL 1.16), without torch: a
zero-argument class, `reset(**row)` on a GRPO dataset row, typed and
docstringed tools, `get_reward()`; driven here as the trainer drives it."""

from __future__ import annotations

import inspect
import json
import typing

import pytest

import kumo_gen
from kumo_gen.trl import KumoToolEnv, grpo_rows


def tools(env: object) -> dict:
    """The public methods TRL exposes as tools."""
    return {
        name: member
        for name, member in inspect.getmembers(env, inspect.ismethod)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    }


def test_the_class_has_trls_shape() -> None:
    env = KumoToolEnv()
    found = tools(env)
    assert set(found) == {"test", "predict"}
    for method in found.values():
        hints = typing.get_type_hints(method)
        assert hints == {next(iter(inspect.signature(method).parameters)): str, "return": str}
        assert "Args:" in (method.__doc__ or "")


def test_rows_and_a_golden_episode_through_the_tools() -> None:
    rows = grpo_rows("medical", n=5, seed=1, efficiency=0.5)
    lines = kumo_gen.generate_lines("medical", n=5, seed=1)
    for row, line in zip(rows, lines):
        assert row["prompt"][0]["role"] == "system" and row["prompt"][-1]["role"] == "user"
        assert row["kumo_line"] == line
        env = KumoToolEnv()
        first = env.reset(**row)
        assert "Actions:" in first and env.get_reward() == 0.0
        optimal = json.loads(line)["optimal"]
        assert "not one of the actions" in env.test("no such action")
        for action in optimal["golden_trajectory"]:
            assert env.test(action).startswith(f"Observation from {action}")
        assert env.predict(optimal["golden_answer"]) == "Correct."
        expected = kumo_gen._native.reward(True, len(optimal["golden_trajectory"]) + 2, optimal["expected_steps"], 0.5)
        assert env.get_reward() == expected


def test_a_wrong_prediction_earns_nothing_and_reset_starts_over() -> None:
    row = grpo_rows("medical", n=1, seed=2)[0]
    env = KumoToolEnv()
    env.reset(**row)
    task = json.loads(row["kumo_line"])
    wrong = next(t for t in task["truths"] if t != task["valid_truth"])
    assert env.predict(wrong) == "Wrong." and env.get_reward() == 0.0
    assert env.predict(task["valid_truth"]) == "The game is over."
    env.reset(**row)
    assert env.predict(task["valid_truth"]) == "Correct." and env.get_reward() == 1.0


def test_dense_rewards_sum_to_the_documented_total() -> None:
    """With `dense`, each tool call that plays is scored by the library;
    `get_reward()` is the turns' sum, `1[proven] - total regret`: 1.0 for
    golden play, and the same rewards as `Env(dense=True)` on the same
    moves."""
    rows = grpo_rows("medical", truths=6, actions=8, n=6, seed=4, dense=True)
    assert all(not r["dense"] for r in grpo_rows("medical", n=2))
    for row in rows:
        task = json.loads(row["kumo_line"])
        optimal = task["optimal"]
        env = KumoToolEnv()
        env.reset(**row)
        for action in optimal["golden_trajectory"]:
            env.test(action)
        env.predict(optimal["golden_answer"])
        assert env.get_reward() == 1.0
        assert [t["reward"] for t in env.turns][-1] == 1.0
        assert all(t["regret"] == 0.0 for t in env.turns)
        assert all(t["move"]["action"] in t["optimal_actions"] for t in env.turns[:-1])

        # Every action in instance order with a repeat and a bad name, then a guess.
        env.reset(**row)
        played = task["actions"][:3] + task["actions"][:1]
        texts = []
        for action in played:
            assert env.test(action).startswith(f"Observation from {action}")
            texts.append(f"<ANSWER> {action} </ANSWER>")
        assert "not one of the actions" in env.test("no such action")
        env.predict(task["truths"][0])
        texts.append(f"<ANSWER> {task['truths'][0]} </ANSWER>")
        rewards = [t["reward"] for t in env.turns]
        assert len(rewards) == len(texts) and rewards[3] == pytest.approx(-1.0, abs=1e-12)
        plain = kumo_gen.Env("medical", tasks=[row["kumo_line"]], dense=True)
        plain.reset(0)
        assert rewards == pytest.approx([plain.step(t)[1] for t in texts], abs=1e-12)
        moves = [t["move"] for t in env.turns]
        proven = 1.0 if moves[-1]["proven"] else 0.0
        assert env.get_reward() == pytest.approx(proven - sum(m["regret"] for m in moves), abs=1e-12)
