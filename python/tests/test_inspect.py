"""Inspect AI (0.3.285 in CI): `inspect eval kumo_gen/kumo` with the
offline players as models `kumo/golden` and `kumo/guess`, offline (the
players set token usage, so no tokenizer is fetched)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kumo_gen
from conftest import need

need("inspect_ai")


def run_inspect(tmp_path: Path, model: str, *task_args: str) -> dict:
    logs = tmp_path / model.replace("/", "-")
    args = ["-T", "domain=medical", "-T", "truths=4", "-T", "actions=6", "-T", "n=8", *task_args]
    result = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "kumo_gen/kumo", "--model", model, *args,
         "--log-dir", str(logs), "--log-format", "json", "--display", "none"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "INSPECT_LOG_LEVEL": "warning"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (log,) = logs.glob("*.json")
    return json.loads(log.read_text())


def metric(log: dict, score: str, name: str) -> float:
    (scores,) = [s for s in log["results"]["scores"] if s["name"] == score]
    return scores["metrics"][name]["value"]


def test_golden_and_guess_through_inspect_eval(tmp_path: Path) -> None:
    golden = run_inspect(tmp_path, "kumo/golden")
    assert log_status(golden) == "success"
    assert metric(golden, "success", "accuracy") == 1.0
    tasks = kumo_gen.generate("medical", 4, 6, n=8, seed=0)
    mean_golden = sum(len(t["optimal"]["golden_trajectory"]) + 2 for t in tasks) / 8
    assert abs(metric(golden, "action_count", "mean") - mean_golden) < 1e-9
    ids = [s["id"] for s in golden["samples"]]
    assert ids == [f"medical/truth_num=4+action_num=6+valid_truth_num=1/0/{i}" for i in range(8)]
    assert all(s["model_usage"] for s in golden["samples"])
    guess = run_inspect(tmp_path, "kumo/guess")
    assert metric(guess, "action_count", "mean") == 2.0
    assert metric(guess, "success", "accuracy") < 1.0


def log_status(log: dict) -> str:
    return log["status"]


def test_dense_rewards_through_inspect_eval(tmp_path: Path) -> None:
    """`-T dense=true`: each sample's `dense_reward` is the sum of its
    turns' rewards, `1[proven answer] - total regret` (1.0 and regret 0
    for the golden player); the 0/1 outcome scores stay."""
    for model in ("kumo/golden", "kumo/random"):
        log = run_inspect(tmp_path, model, "-T", "dense=true")
        assert log_status(log) == "success"
        for sample in log["samples"]:
            value = sample["scores"]["kumo_scorer"]["value"]
            turns = sample["metadata"]["kumo_turns"]
            moves = [t["move"] for t in turns if t["move"] is not None]
            answers = [m for m in moves if m["answer"] is not None]
            proven = 1.0 if answers and answers[-1]["proven"] else 0.0
            regret = sum(m["regret"] for m in moves)
            assert abs(value["dense_reward"] - sum(t["reward"] for t in turns)) < 1e-12
            assert abs(value["dense_reward"] - (proven - regret)) < 1e-12
            assert abs(value["total_regret"] - regret) < 1e-12
            assert value["success"] in (0.0, 1.0)
            if model == "kumo/golden":
                assert value["dense_reward"] == 1.0 and regret == 0.0
        if model == "kumo/golden":
            assert metric(log, "dense_reward", "mean") == 1.0
            assert metric(log, "total_regret", "mean") == 0.0
    plain = run_inspect(tmp_path / "plain", "kumo/golden")
    assert all("kumo_turns" not in s["metadata"] for s in plain["samples"])
