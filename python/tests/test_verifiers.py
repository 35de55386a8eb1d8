"""verifiers v1 (0.4.x in CI): the loader resolves `kumo-gen` and
`kumo-gen-env`, the default config yields keyed tasks at once, and the env
plays whole episodes through the native session (the golden and guess
players scripting the model)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, List

import pytest

import kumo_gen
from kumo_gen import players
from kumo_gen._play import native_task
from conftest import need

vf = need("verifiers.v1")
loaders = need("verifiers.v1.utils.loaders")


@pytest.mark.parametrize("taskset_id", ["kumo-gen", "kumo-gen-env", "someone/kumo-gen@0.1.0"])
def test_the_loader_resolves_the_ids(taskset_id: str) -> None:
    import kumo_gen_env

    assert loaders.taskset_class(taskset_id) is kumo_gen_env.KumoTaskset
    config = loaders.resolve_env_config({"taskset": {"id": taskset_id}})
    env = loaders.load_environment(config)
    assert isinstance(env, kumo_gen_env.KumoGameEnv)
    assert type(config.taskset).__name__ == "KumoConfig"


def test_default_config_yields_keyed_tasks_lazily() -> None:
    config = loaders.resolve_env_config({"taskset": {"id": "kumo-gen", "truths": 5, "actions": 7, "seed": 3, "start": 10}})
    taskset = loaders.load_taskset(config.taskset)
    tasks = iter(taskset)
    first = next(tasks)
    assert first.key == "medical/truth_num=5+action_num=7+valid_truth_num=1/3/10"
    second = next(tasks)
    assert second.key.endswith("/3/11")
    info = second.data.info
    assert info["line"] == kumo_gen.dumps(kumo_gen.instance("medical", 5, 7, index=11, seed=3))
    assert info["difficulty"]["truths"] == 5 and info["generator_version"] == kumo_gen.__version__
    # The wire half is JSON-self-contained.
    json.loads(second.data.model_dump_json())
    assert second.data.system_prompt == native_task(info).system_prompt
    assert len(list(taskset)) == 100


def test_a_family_travels_as_its_document() -> None:
    config = loaders.resolve_env_config({"taskset": {"id": "kumo-gen", "family": "rules3", "family_seed": 5, "truths": 4, "actions": 4, "num_tasks": 2}})
    tasks = list(loaders.load_taskset(config.taskset))
    # Not the shipped `rules3` (family seed 0): the document travels.
    assert tasks[0].data.info["domain_document"] is not None
    assert native_task(tasks[1].data.info).judge(json.loads(tasks[1].data.info["line"])["valid_truth"])


class ScriptedInteraction:
    """The model side of `agents.player.interaction(task)`: an offline
    player answering each user turn (append-only history, as v1)."""

    def __init__(self, player: str, task: Any) -> None:
        self.player = player
        self.native = native_task(task.data.info)
        self.messages: List[dict] = [
            {"role": "system", "content": task.data.system_prompt},
            {"role": "user", "content": task.data.prompt},
        ]
        self.trace = vf.Trace.model_construct(rewards={}, metrics={}, info={})
        self.turns = 0

    async def turn(self, message: Any = None) -> Any:
        if message is not None:
            self.messages.append({"role": "user", "content": message})
        text = players.reply(self.player, self.native, self.messages)["text"]
        self.messages.append({"role": "assistant", "content": text})
        self.turns += 1
        return vf.Segment(messages=[vf.AssistantMessage(content=text)])


class ScriptedAgents:
    def __init__(self, player: str) -> None:
        self.player_name = player
        self.interactions: List[ScriptedInteraction] = []

    @property
    def player(self) -> Any:
        return self

    @contextlib.asynccontextmanager
    async def interaction(self, task: Any) -> Any:
        it = ScriptedInteraction(self.player_name, task)
        self.interactions.append(it)
        yield it


@pytest.mark.parametrize("player", ["golden", "guess"])
def test_the_env_plays_episodes_and_records_kumos_metrics(player: str) -> None:
    config = loaders.resolve_env_config({"taskset": {"id": "kumo-gen", "num_tasks": 6, "efficiency": 0.5}})
    env = loaders.load_environment(config)
    results = []
    for task in env.taskset:
        agents = ScriptedAgents(player)
        asyncio.run(env.run(task, agents))
        trace = agents.interactions[0].trace
        optimal = json.loads(task.data.info["line"])["optimal"]
        assert set(trace.metrics) == {"success", "action_count", "relative_action_count", "parse_error"}
        assert trace.info["kumo_trial"]["actions"][-1] == {"predicted_truth": trace.info["kumo_trial"]["actions"][-2]}
        if player == "golden":
            assert trace.metrics["success"] == 1.0
            assert trace.metrics["action_count"] == len(optimal["golden_trajectory"]) + 2
            assert agents.interactions[0].turns == len(optimal["golden_trajectory"]) + 1
        else:
            assert trace.metrics["action_count"] == 2.0
        expected = kumo_gen._native.reward(trace.metrics["success"] == 1.0, int(trace.metrics["action_count"]), optimal["expected_steps"], 0.5)
        assert trace.rewards["kumo_reward"].score == expected
        results.append(trace.metrics["success"])
    if player == "guess":
        assert sum(results) < len(results)


def env_rewards(line: str, texts: List[str]) -> List[float]:
    """The Python `Env(dense=True)`'s rewards for the same replies."""
    env = kumo_gen.Env("medical", tasks=[line], dense=True)
    env.reset(0)
    return [env.step(text)[1] for text in texts]


@pytest.mark.parametrize("player", ["golden", "random", "guess"])
def test_dense_rewards_sum_to_the_documented_total(player: str) -> None:
    config = loaders.resolve_env_config({"taskset": {"id": "kumo-gen", "num_tasks": 6, "truths": 6, "actions": 8, "dense": True}})
    env = loaders.load_environment(config)
    for task in env.taskset:
        agents = ScriptedAgents(player)
        asyncio.run(env.run(task, agents))
        interaction = agents.interactions[0]
        trace = interaction.trace
        assert set(trace.rewards) == {"kumo_dense"}
        turns = trace.info["kumo_turns"]
        rewards = [t["reward"] for t in turns]
        texts = [m["content"] for m in interaction.messages if m["role"] == "assistant"]
        assert rewards == pytest.approx(env_rewards(task.data.info["line"], texts), abs=1e-12)
        moves = [t["move"] for t in turns if t["move"] is not None]
        answers = [m for m in moves if m["answer"] is not None]
        proven = 1.0 if answers and answers[-1]["proven"] else 0.0
        regret = sum(m["regret"] for m in moves)
        assert trace.rewards["kumo_dense"].score == pytest.approx(proven - regret, abs=1e-12)
        assert trace.metrics["total_regret"] == pytest.approx(regret, abs=1e-12)
        assert trace.metrics["proven"] == proven
        if player == "golden":
            assert trace.rewards["kumo_dense"].score == 1.0 and regret == 0.0
            for turn in turns[:-1]:
                assert turn["move"]["action"] in turn["optimal_actions"]
            assert turns[-1]["optimal_actions"] == [] and turns[-1]["reward"] == 1.0
