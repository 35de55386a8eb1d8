"""`Env(protocol=...)` plays `kumo-gen eval --turns`'s explore-then-predict
trial (the library's one game): eval's golden and guessing players' replies, fed to
the `Env`, give eval's trials line for line, nothing hidden is shown
before the end, and the reward is the accuracy over the tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

import kumo_gen
from conftest import REPO

DOMAIN = str(REPO / "domains" / "opponents.yaml")
SETTING = "truth_num=8+action_num=6+valid_truth_num=1"
PROTOCOLS = {
    "VanillaAgent-predict=2@1": ({"turns": 2, "tests": 6}, ["--turns", "2", "--tests", "6"]),
    "VanillaAgent-predict=2@2-end": (
        {"turns": 2, "tests": 6, "attempts": 2, "feedback": "end"},
        ["--turns", "2", "--tests", "6", "--attempts", "2", "--feedback", "end"],
    ),
}


@pytest.fixture(scope="module")
def evals(run_cli, tmp_path_factory) -> Dict[str, Any]:
    """Three opponents 8x6 instances and eval's golden and guess trials
    of them under both protocols."""
    root = tmp_path_factory.mktemp("predict")
    run_cli("generate", "--domain", DOMAIN, "--truths", "8", "--actions", "6", "-n", "3", "--out", str(root / "data"))
    lines = (root / "data" / "opponents" / f"{SETTING}.jsonl").read_text().splitlines()
    results: Dict[str, List[Dict[str, Any]]] = {}
    for player in ("golden", "guess"):
        for agent, (_, flags) in PROTOCOLS.items():
            run_cli("eval", "--player", player, "--data", str(root / "data"), "--out", str(root / "results"), "--trials", "1", *flags)
            path = root / "results" / player / agent / "opponents" / SETTING / "eval_times=1.jsonl"
            results[f"{player}/{agent}"] = [json.loads(l) for l in path.read_text().splitlines()]
    return {"lines": lines, "results": results}


def without_tokens(trial: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in trial.items() if k != "consumed_tokens"}


@pytest.mark.parametrize("player", ["golden", "guess"])
@pytest.mark.parametrize("agent", sorted(PROTOCOLS))
def test_a_protocol_episode_is_evals_trial_and_earns_its_accuracy(evals, player: str, agent: str) -> None:
    protocol, _ = PROTOCOLS[agent]
    env = kumo_gen.Env(DOMAIN, tasks=evals["lines"], protocol=protocol)
    accuracies = []
    for index, line in enumerate(evals["lines"]):
        instance = json.loads(line)
        eval_line = next(l for l in evals["results"][f"{player}/{agent}"] if l["seed"] == instance["seed"])
        eval_trial = eval_line["trajectories"][0]
        tests = [t["input"] for t in eval_trial["predict"]["tests"]]
        messages = env.reset(index)
        assert "Candidate" in messages[0]["content"] or "Candidate" in messages[-1]["content"]
        done, reward, info = False, None, {}
        for text in eval_trial["generated_text"]:
            assert not done
            observation, reward, done, info = env.step(text)
            if not done:
                assert reward == 0.0
                # Nothing hidden before the end: no outcome, no test's
                # right output, no test input while exploring, no verdict
                # with one attempt, no output under feedback `end`.
                for secret in ("trial", "accuracy", "successful", "expected", "right_at"):
                    assert secret not in info, (secret, info)
                assert instance["valid_truth"] not in observation
                if info["phase"] == "explore":
                    assert not any(t in observation for t in tests), observation
                    if protocol.get("feedback") == "end":
                        assert "observation" not in info and observation.startswith("Noted: ")
                if protocol.get("attempts", 1) == 1:
                    assert "right" not in info
        assert done and observation == "" and env.done
        assert without_tokens(info["trial"]) == without_tokens(eval_trial)
        record = eval_trial["predict"]
        right = sum(t["right_at"] is not None for t in record["tests"])
        assert reward == right / len(record["tests"]) == record["accuracy"] == info["accuracy"]
        accuracies.append(reward)
    if player == "guess":
        assert min(accuracies) < 1.0, "a guesser misses some test"


def test_protocol_settings_are_checked() -> None:
    for bad in ({"turns": 0}, {"turns": 1001}, {"tests": 3}, {"turns": 2, "shots": 1}, {"turns": 2, "feedback": "later"}, {"turns": True}):
        with pytest.raises(ValueError):
            kumo_gen.Env(DOMAIN, truths=8, actions=6, n=1, protocol=bad)
    with pytest.raises(ValueError, match="dense rewards are not defined under protocol"):
        kumo_gen.Env(DOMAIN, truths=8, actions=6, n=1, protocol={"turns": 2}, dense=True)
    with pytest.raises(ValueError, match="two protocols"):
        kumo_gen.Env(DOMAIN, truths=8, actions=6, n=1, protocol={"turns": 2}, budget=3)
    # More tests than the held-out inputs: the library's refusal.
    env = kumo_gen.Env(DOMAIN, truths=8, actions=6, n=1, protocol={"turns": 2, "tests": 1000})
    with pytest.raises(ValueError, match="asks for more test inputs"):
        env.reset(0)
