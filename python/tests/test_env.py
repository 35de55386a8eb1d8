"""`Env` plays exactly `kumo-gen eval`'s protocol: the same scripted replies,
served to `eval` by a loopback chat-completions server, give the same
requests, trials, successes and action counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

import kumo_gen
from conftest import ACTIONS, DOMAIN, MAX_STEPS, N, SEED, TOKENS_PER_REPLY, TRUTHS, script


def play(env: kumo_gen.Env, index: int) -> Dict[str, Any]:
    """Plays the script on instance `index`; returns the requests, the final
    info and reward."""
    instance = env.instance(index)
    requests: List[Any] = [env.reset(index)]
    assert env.messages() == requests[0]
    turn, done = 0, False
    while not done:
        text = script(index, instance, turn)
        observation, reward, done, info = env.step(text, tokens=TOKENS_PER_REPLY)
        turn += 1
        if not done:
            assert observation == env.messages()[-1]["content"]
            requests.append(env.messages())
        else:
            assert observation == "" and env.messages() is None
    return {"requests": requests, "info": info, "reward": reward}


def test_env_instances_are_the_cli_dataset(eval_run) -> None:
    env = eval_run["env"]
    assert [kumo_gen.dumps(env.instance(i)) for i in range(N)] == eval_run["lines"]


def test_env_rollouts_equal_eval(eval_run) -> None:
    env: kumo_gen.Env = eval_run["env"]
    kinds = set()
    for i in range(N):
        trial = eval_run["trials"][i]
        played = play(env, i)
        # The requests eval sent, message for message.
        assert played["requests"] == eval_run["requests"][i], f"instance {i}"
        # The same trial, field for field (KUMO's result format).
        assert env.trial() == trial, f"instance {i}"
        info = played["info"]
        assert info["successful"] == trial["successful"]
        assert info["action_count"] == len(trial["actions"])
        assert info["trial"]["parse_error"] == trial["parse_error"]
        assert played["reward"] == (1.0 if trial["successful"] else 0.0)
        kinds.add((info["kind"], trial["successful"], info["truncated"]))
    # Every ending occurred: success, failure, parse error, reply limit.
    assert {("prediction", True, False), ("prediction", False, False), ("parse_error", False, False), ("observation", False, True)} <= kinds


def test_question_is_evals_system_message_with_the_written_book(eval_run) -> None:
    data = kumo_gen.create_dataset(DOMAIN, size=N, seed=SEED, truths=TRUTHS, actions=ACTIONS)
    for i in range(N):
        assert data[i]["question"] == eval_run["requests"][i][0][0]["content"]
        book = (eval_run["data"] / DOMAIN / "knowledge_book" / kumo_gen.setting_name(TRUTHS, ACTIONS) / f"seed={i}.txt").read_text()
        assert book.rstrip("\n") in data[i]["question"]


def test_efficiency_reward_and_episode_rules() -> None:
    env = kumo_gen.Env("medical", 4, 6, seed=0, n=3, efficiency=0.5)
    instance = env.instance(0)
    opt = instance["optimal"]
    env.reset(0)
    actions = instance["actions"]
    # Twice as many actions as optimal play's count, then the right answer.
    optimal_count = opt["expected_steps"] + 2
    replies = [f"<ANSWER> {actions[0]} </ANSWER>"] * (round(2 * optimal_count) - 2)
    for text in replies:
        _, reward, done, info = env.step(text)
        assert reward == 0.0 and not done and info["kind"] == "observation"
    _, reward, done, info = env.step(f"<ANSWER> {opt['golden_answer']} </ANSWER>")
    assert done and info["successful"]
    n = info["action_count"]
    assert n == len(replies) + 2
    assert reward == pytest.approx(0.5 + 0.5 * min(1.0, optimal_count / n))
    with pytest.raises(RuntimeError):
        env.step("again")
    # Cycling reset, and a claude model gets the system prompt as a user message (as KUMO).
    assert env.reset()[0]["role"] == "system" and env.index == 1
    assert kumo_gen.Env("medical", n=1, model="claude-3.5-sonnet").reset(0)[0]["role"] == "user"
    with pytest.raises(ValueError):
        kumo_gen.Env("medical", n=1, efficiency=2.0)


def test_env_on_given_tasks(eval_run) -> None:
    env = kumo_gen.Env(DOMAIN, tasks=eval_run["lines"][:3])
    assert len(env) == 3
    messages = env.reset(2)
    assert messages[1]["content"] == env.task(2).instruction
    _, _, done, info = env.step(None)
    assert done and info["kind"] == "parse_error" and env.trial()["generated_text"] == [None]
