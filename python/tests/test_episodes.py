"""Per-index episodes (`instance`, `generate(start=)`), their stamps, and
the offline players, against the CLI's file and `eval --player`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kumo_gen
from kumo_gen import players
from conftest import FIXTURES
from test_generate import cli_lines

# A small domain whose first draws collide: line i needs the earlier
# draws' keys.
CLINIC = str(FIXTURES / "ok" / "clinic.yaml")


@pytest.mark.parametrize("domain,truths,actions,n,seed", [("medical", 4, 6, 30, 2), (CLINIC, 3, 3, 150, 0)])
def test_instance_i_is_line_i_of_the_clis_file(run_cli, tmp_path: Path, domain: str, truths: int, actions: int, n: int, seed: int) -> None:
    lines = cli_lines(run_cli, tmp_path, domain, truths, actions, n, seed, 1).decode().splitlines()
    for index in (0, 1, n // 2, n - 1):
        task = kumo_gen.instance(domain, truths=truths, actions=actions, index=index, seed=seed)
        assert kumo_gen.dumps(task) == lines[index]
    tail = kumo_gen.generate(domain, truths, actions, n=7, seed=seed, start=n - 7)
    assert [kumo_gen.dumps(t) for t in tail] == lines[n - 7 :]


def test_far_lines_equal_the_clis_and_adapters_read_them_lazily(run_cli, tmp_path: Path) -> None:
    # Line 30,000 of the CLI's file, and chunked reads around it: the line
    # index (built once) gives the same bytes as the CLI's whole file.
    n = 30000
    lines = cli_lines(run_cli, tmp_path, "medical", 4, 6, n, 4, 1, "--no-labels", "--no-sft", "--books", "none").decode().splitlines()
    for index in (n - 1, 16385, 9000):
        task = kumo_gen.instance("medical", 4, 6, index=index, seed=4, labels=False)
        assert kumo_gen.dumps(task) == lines[index]
    env = kumo_gen.Env("medical", 4, 6, seed=4, n=200, start=n - 200, labels=False)
    assert [kumo_gen.dumps(env.instance(i)) for i in range(200)] == lines[n - 200 :]
    assert env.instance(-1) == json.loads(lines[-1])
    data = kumo_gen.create_dataset("medical", size=300, seed=4, labels=False)
    assert [item["metadata"]["instance"]["truths"] for item in data] == [json.loads(line)["truths"] for line in lines[:300]]
    assert len(data._items) <= 256


def test_bad_ranges_are_value_errors() -> None:
    with pytest.raises(ValueError):
        kumo_gen.generate("medical", n=2, start=-1)
    with pytest.raises(ValueError):
        kumo_gen.generate("medical", n=0, start=3)


def test_every_item_is_stamped() -> None:
    domain = kumo_gen.load_domain("medical")
    task = kumo_gen.instance(domain, 4, 6, index=5, seed=3)
    s = kumo_gen.stamp(domain, task, 4, 6, 1, 3, 5)
    assert s["id"] == "medical/truth_num=4+action_num=6+valid_truth_num=1/3/5"
    assert s["generator_version"] == kumo_gen.__version__
    assert s["domain_hash"] == domain.source_hash and len(s["domain_hash"]) > 8
    d = s["difficulty"]
    assert (d["truths"], d["actions"], d["valid"]) == (4, 6, 1)
    assert {k: d[k] for k in task["difficulty"]} == task["difficulty"]
    assert d["expected_steps"] == task["optimal"]["expected_steps"]
    assert d["golden_length"] == len(task["optimal"]["golden_trajectory"])
    # The golden player answers when at most one candidate is left, or
    # when no action left can tell the rest apart.
    assert 1 <= d["consistent_at_answer"] < 4
    meta = kumo_gen.create_dataset("medical", size=6, seed=3)[5]["metadata"]
    assert {k: meta[k] for k in s} == s and meta["source_dataset"] == "kumo"
    unlabelled = kumo_gen.instance(domain, 4, 6, index=5, seed=3, labels=False)
    assert kumo_gen.stamp(domain, unlabelled, 4, 6, 1, 3, 5)["difficulty"]["expected_steps"] is None


def test_players_play_whole_trials() -> None:
    domain = kumo_gen.load_domain("medical")
    tasks = [kumo_gen.Task(domain, line) for line in kumo_gen.generate_lines(domain, 4, 6, n=10, seed=1)]
    assert players.PLAYERS == ("golden", "random", "guess")
    for task in tasks:
        golden = players.play("golden", task)
        optimal = json.loads(task.line)["optimal"]
        assert golden.successful and golden.action_count == len(optimal["golden_trajectory"]) + 2
        assert players.play("random", task, seed=4).successful
        assert players.play("guess", task, seed=4).action_count == 2
    assert sum(players.play("guess", t, seed=4).successful for t in tasks) < len(tasks)
    r = players.reply("golden", tasks[0], kumo_gen.Env("medical", tasks=[tasks[0].line]).reset(0))
    assert r["text"].startswith("<ANSWER>") and r["input_tokens"] > 100 and r["output_tokens"] >= 3
    with pytest.raises(ValueError, match="golden"):
        players.reply("oracle", tasks[0], [])
    unlabelled = kumo_gen.Task(domain, kumo_gen.generate_lines(domain, 4, 6, n=1, labels=False)[0])
    with pytest.raises(ValueError, match="labelled"):
        players.play("golden", unlabelled)


def test_python_players_equal_eval_player(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "data"
    run_cli("generate", "--domain", "medical", "--truths", 4, "--actions", 6, "-n", 6, "--seed", 2, "--out", data)
    run_cli("eval", "--player", "random", "--data", data, "--out", tmp_path / "results", "--trials", 1, "--seed", 9)
    written = tmp_path / "results" / "random" / "VanillaAgent" / "medical" / kumo_gen.setting_name(4, 6)
    lines = [json.loads(l) for l in (written / "eval_times=1.jsonl").read_text().splitlines()]
    domain = kumo_gen.load_domain("medical")
    for line in lines:
        task = kumo_gen.Task(domain, kumo_gen.dumps(kumo_gen.instance(domain, index=line["seed"], seed=2)))
        session = players.play("random", task, seed=9)
        assert session.trial()["actions"] == line["trajectories"][0]["actions"]


def test_env_steps_carry_the_stamp() -> None:
    env = kumo_gen.Env("medical", 4, 6, seed=3, n=2, start=5)
    env.reset(1)
    task = env.instance(1)
    assert kumo_gen.dumps(task) == kumo_gen.dumps(kumo_gen.instance("medical", index=6, seed=3))
    _, _, _, info = env.step(f"<ANSWER> {task['valid_truth']} </ANSWER>")
    assert info["id"] == "medical/truth_num=4+action_num=6+valid_truth_num=1/3/6"
    assert info["difficulty"]["expected_steps"] == task["optimal"]["expected_steps"]
    given = kumo_gen.Env("medical", tasks=[task])
    given.reset(0)
    assert given.step(None)[3]["id"] == "medical/truth_num=4+action_num=6+valid_truth_num=1/tasks/6"


def test_env_budget_replays_eval_budget_trials(run_cli, tmp_path: Path) -> None:
    """`Env(budget=N)` is `kumo-gen eval --budget N`: eval's guess player's
    replies, fed to the Env, give eval's requests' outcome and its trial."""
    data = tmp_path / "data"
    run_cli("generate", "--domain", "medical", "--truths", 4, "--actions", 6, "-n", 8, "--seed", 2, "--out", data)
    run_cli("eval", "--player", "guess", "--budget", 3, "--data", data, "--out", tmp_path / "results", "--trials", 1, "--seed", 5)
    written = tmp_path / "results" / "guess" / "VanillaAgent-budget=3" / "medical" / kumo_gen.setting_name(4, 6)
    results = [json.loads(l) for l in (written / "eval_times=1.jsonl").read_text().splitlines()]
    lines = (data / "medical" / (kumo_gen.setting_name(4, 6) + ".jsonl")).read_text().splitlines()
    env = kumo_gen.Env("medical", tasks=lines, budget=3)
    kinds = set()
    for result in results:
        trial = result["trajectories"][0]
        first = env.reset(result["seed"])
        assert first[0]["content"].endswith("You have 3 turns. Each reply uses one turn. A wrong answer is told \"wrong\" and the game goes on until you name the right answer or the turns run out.")
        done, info, reward = False, {}, 0.0
        for text in trial["generated_text"]:
            assert not done
            _, reward, done, info = env.step(text)
            kinds.add(info["kind"])
        assert done
        # Token counts are the player's own, not replayed here.
        assert {**env.trial(), "consumed_tokens": trial["consumed_tokens"]} == trial
        assert info["successful"] == trial["successful"] and reward == float(trial["successful"])
        assert info["action_count"] == len(trial["actions"])
        assert info["truncated"] == (not trial["successful"] and info["kind"] == "wrong")
    assert "wrong" in kinds and "prediction" in kinds
    with pytest.raises(ValueError):
        kumo_gen.Env("medical", tasks=lines, budget=0)


def test_env_budget_tells_wrong_and_goes_on() -> None:
    env = kumo_gen.Env("medical", 4, 6, n=1, budget=2)
    env.reset(0)
    task = env.instance(0)
    wrong = next(t for t in task["truths"] if t != task["valid_truth"])
    observation, reward, done, info = env.step(f"<ANSWER> {wrong} </ANSWER>")
    assert (info["kind"], done, reward) == ("wrong", False, 0.0)
    assert observation.startswith(f"Observation from previous action: {{'action': '{wrong}', 'observation': 'wrong'}}")
    _, reward, done, info = env.step(f"<ANSWER> {task['valid_truth']} </ANSWER>")
    assert (info["kind"], done, reward, info["successful"]) == ("prediction", True, 1.0, True)
    assert info["trial"]["budget"] == 2
    env.reset(0)
    env.step(f"<ANSWER> {wrong} </ANSWER>")
    _, reward, done, info = env.step(f"<ANSWER> {wrong} </ANSWER>")
    assert (done, reward, info["truncated"], info["successful"]) == (True, 0.0, True, False)
