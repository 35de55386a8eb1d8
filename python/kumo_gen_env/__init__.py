"""KUMO's game as a verifiers v1 taskset and environment (`verifiers>=0.3.1`;
0.4 has only the v1 stack).

verifiers' loader maps a taskset id to a module (strip `owner/` and
`@version`, `-` to `_`, lower case) and takes the one `vf.Taskset`
subclass (and the `vf.Env` subclass) the module's `__all__` exports. This
module is `kumo-gen-env`; `kumo_gen` exports the same two classes, so the
id `kumo-gen` resolves too:

    vf-eval kumo-gen --env.taskset.domain medical --env.taskset.truths 4

- `KumoConfig` (`--env.taskset.*`): `domain` (a shipped domain name, a
  domain file's path) or `family` (`rules3`, `circuits`, `ciphers`, with
  `family_seed`), `truths`, `actions`, `valid`, `seed`, `start`,
  `num_tasks`, `max_steps`, `efficiency`, `dense`.
- `KumoTaskset.load()` yields instances lazily, one at a time, each made
  by `kumo_gen.instance(...)`: task `i` is line `start + i` of the file
  `kumo-gen generate` writes with these parameters. A task's `key` (and
  `data.id`) is `<domain>/<setting>/<seed>/<index>`; `data.info` holds
  the instance line, the domain (its document for a family or a file, so
  the task data is self-contained on an env server), `generator_version`,
  `domain_hash` and `difficulty`.
- `KumoGameEnv.run()` plays KUMO's protocol through the native session
  (`kumo_gen.Session`: eval's parser, observation wording and action
  counting): the model speaks first on the task prompt (eval's first
  request: the system prompt with the knowledge book, then the per-round
  instruction); each reply goes to the session and its next user message
  (the observation, then the instruction) comes back as the next turn.
  History only grows, as v1 conversations do: eval's exact KUMO request
  (which rewrites earlier turns) is not reproduced. At the end it records
  the reward `kumo_reward` (weight 1: success, scaled by the efficiency
  term when `efficiency` > 0, see `kumo_gen.Env`) and the metrics
  `success`, `action_count`, `relative_action_count` ((n - (E + 2)) /
  (E + 2), KUMO's count) and `parse_error`, and puts the KUMO trial in
  `trace.info["kumo_trial"]`.
- Dense rewards (opt-in, `--env.taskset.dense true`; docs/analytics.md):
  every reply is scored by the library against the exact optimum; the
  reward is `kumo_dense` (weight 1: the sum of the turns' dense rewards,
  `1[proven answer] - total regret`) instead of `kumo_reward`, with the
  metrics `total_regret` and `proven` added; v1 records rewards per
  episode, so the turns (`{reward, regret, optimal_actions, move}` per
  reply) go to `trace.info["kumo_turns"]`.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, Optional

import verifiers.v1 as vf

from kumo_gen import _native
from kumo_gen._play import DenseTurns, episodes, native_task, resolve_domain, trial_scores


class KumoConfig(vf.TasksetConfig):
    """Which instances the taskset yields (`--env.taskset.<field>`)."""

    domain: str = "medical"
    """A shipped domain name or a domain file's path (ignored with `family`)."""
    family: Optional[str] = None
    """A procedural task family instead (`rules3`, `circuits`, `ciphers`)."""
    family_seed: int = 0
    """The family domain's seed (`kumo-gen family --seed`)."""
    truths: int = 4
    actions: int = 6
    valid: int = 1
    seed: int = 0
    """Generation seed (`kumo-gen generate --seed`)."""
    start: int = 0
    """Index of the first instance."""
    num_tasks: int = 100
    max_steps: int = 50
    """Replies per episode at most (eval's `--max-steps`)."""
    efficiency: float = 0.0
    """Weight w of the efficiency term of the reward, 0 to 1."""
    dense: bool = False
    """Dense per-turn rewards (docs/analytics.md) instead of the outcome."""


class KumoData(vf.TaskData):
    id: Optional[str] = None
    """`<domain>/<setting>/<seed>/<index>` (declared here too: verifiers
    0.3.1's `TaskData` has no `id`)."""
    info: Dict[str, Any]
    """`line`, `domain` (name) and `domain_document` (set for families and
    files), `max_steps`, `efficiency`, and the stamp (`kumo_gen.stamp`)."""


class KumoTask(vf.Task[KumoData, vf.State, vf.TaskConfig]):
    @property
    def key(self) -> str:
        """The durable `<domain>/<setting>/<seed>/<index>`."""
        return self.data.id or self.hash


class KumoTaskset(vf.Taskset[KumoTask, KumoConfig]):
    def load(self) -> Iterator[KumoTask]:
        c = self.config
        if not 0.0 <= c.efficiency <= 1.0:
            raise ValueError(f"efficiency must be from 0 to 1, not {c.efficiency}")
        if c.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        domain = resolve_domain(c.domain, c.family, c.family_seed)
        for i, info in enumerate(episodes(domain, c.truths, c.actions, c.valid, c.seed, c.start, c.num_tasks)):
            yield KumoTask(
                KumoData(
                    idx=i,
                    id=info["id"],
                    name=info["id"],
                    prompt=info.pop("instruction"),
                    system_prompt=info.pop("system_prompt"),
                    info={**info, "max_steps": c.max_steps, "efficiency": c.efficiency, "dense": c.dense},
                ),
                c.task,
            )


class KumoEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"})


class KumoGameEnv(vf.Env[KumoEnvConfig]):
    async def run(self, task: KumoTask, agents: Any) -> None:
        info = task.data.info
        native = native_task(info)
        session = _native.Session(native, "", info["max_steps"])
        dense = DenseTurns(native) if info.get("dense") else None
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                step = session.respond(segment.last_reply)
                if dense is not None:
                    dense.score(step)
                if session.finished:
                    break
                segment = await interaction.turn(session.request()[-1]["content"])
        trace = interaction.trace
        scores = trial_scores(session, native, info["efficiency"])
        outcome = scores.pop("reward")
        if dense is None:
            trace.record_reward("kumo_reward", outcome, 1.0)
        else:
            metrics = dense.metrics()
            trace.record_reward("kumo_dense", metrics.pop("dense_reward"), 1.0)
            scores.update(metrics)
            trace.info["kumo_turns"] = json.loads(json.dumps(dense.turns))
        for name, value in scores.items():
            trace.record_metric(name, value)
        trace.info["kumo_trial"] = json.loads(json.dumps(session.trial()))
        trace.info["kumo_id"] = info["id"]


__all__ = ["KumoConfig", "KumoGameEnv", "KumoTaskset"]
