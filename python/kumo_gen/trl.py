"""TRL: KUMO's game as a tool environment for
`GRPOTrainer(environment_factory=KumoToolEnv)` (TRL >= 1.16), and the
`prompt`-column dataset GRPO wants. Needs no TRL import itself.

    from kumo_gen.trl import KumoToolEnv, grpo_dataset
    trainer = GRPOTrainer(model=..., train_dataset=grpo_dataset("medical", n=256),
                          environment_factory=KumoToolEnv, ...)

`grpo_dataset(...)` (`datasets.Dataset`; `grpo_rows(...)` gives the rows as
dicts) has one row per instance: `prompt` (the system prompt with the
knowledge book, then a user turn naming the tools), `id`, and the columns
`reset` reads (`kumo_line`, `kumo_domain`, `kumo_domain_document` as JSON
text, `max_steps`, `efficiency`, `difficulty` as JSON text).

`KumoToolEnv` (zero-argument constructor): `reset(**row)` starts the
episode of the row and returns the first observation text (appended to
the prompt's user turn); the tools are `test(action)` and
`predict(truth)`; `get_reward()` is the episode's reward (0 until it is
won: success, scaled by the efficiency term, see `kumo_gen.Env`).

Dense rewards (opt-in: `grpo_rows(..., dense=True)`, the row's `dense`
column; docs/analytics.md): every tool call that plays is scored by the
library against the exact optimum, and `get_reward()` is the sum of the
turns' rewards, `1[proven answer] - total regret` (TRL has no per-step
reward, so the turns are on the environment for reward functions that
take `environments=`: the attribute `turns`, one `{reward, regret,
optimal_actions, move}` per call that played). Tool outputs never
show the optimal actions.

How tool calls map to KUMO's action count: every `test` call is one KUMO
reply naming an action (one entry); a `predict` call is the reply naming a
truth (two entries: the reply and its `predicted_truth`), which ends the
episode. A call naming something that is not an action (for `test`) or a
truth (for `predict`) of the instance is answered with an error text and
counted nowhere (KUMO would end the trial as a parse error; a tool schema
already rules out a malformed reply). Calls after the end change nothing.
An episode the model leaves without predicting earns 0. `max_steps`
(default 50) KUMO replies end it unsuccessfully; set TRL's
`max_tool_calling_iterations` to about the same.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from . import _native
from ._api import parse_answer
from ._play import DenseTurns, episodes, native_task, resolve_domain, trial_scores

TOOLS_NOTE = (
    "Play with the tools: `test(action)` performs an action and returns what it showed; "
    "`predict(truth)` names the truth and ends the game."
)


def grpo_rows(
    domain: str = "medical",
    truths: int = 4,
    actions: int = 6,
    n: int = 100,
    seed: int = 0,
    valid: int = 1,
    *,
    start: int = 0,
    family: Optional[str] = None,
    family_seed: int = 0,
    max_steps: int = 50,
    efficiency: float = 0.0,
    dense: bool = False,
) -> List[Dict[str, Any]]:
    """The rows of `grpo_dataset`, as dicts."""
    d = resolve_domain(domain, family, family_seed)
    rows = []
    for info in episodes(d, truths, actions, valid, seed, start, n):
        rows.append(
            {
                "prompt": [
                    {"role": "system", "content": info["system_prompt"]},
                    {"role": "user", "content": TOOLS_NOTE},
                ],
                "id": info["id"],
                "kumo_line": info["line"],
                "kumo_domain": info["domain"],
                "kumo_domain_document": json.dumps(info["domain_document"]),
                "max_steps": max_steps,
                "efficiency": efficiency,
                "dense": dense,
                "difficulty": json.dumps(info["difficulty"]),
            }
        )
    return rows


def grpo_dataset(*args: Any, **kwargs: Any) -> Any:
    """A `datasets.Dataset` of `grpo_rows(*args, **kwargs)` (needs `datasets`)."""
    import datasets

    return datasets.Dataset.from_list(grpo_rows(*args, **kwargs))


class KumoToolEnv:
    """One KUMO episode at a time, played through tool calls."""

    def __init__(self) -> None:
        self._session: Optional[Any] = None
        self._task: Optional[Any] = None
        self._efficiency = 0.0
        self._dense: Optional[DenseTurns] = None
        # With `dense`: one `{reward, regret, optimal_actions, move}` per
        # tool call that played (an attribute: TRL makes every public
        # method a tool).
        self.turns: List[Dict[str, Any]] = []

    def reset(self, **row: Any) -> str:
        """Starts the episode of a `grpo_dataset` row; returns the first
        observation text."""
        document = json.loads(row.get("kumo_domain_document") or "null")
        info = {"line": row["kumo_line"], "domain": row["kumo_domain"], "domain_document": document}
        self._task = native_task(info)
        self._session = _native.Session(self._task, "", int(row.get("max_steps", 50)))
        self._efficiency = float(row.get("efficiency", 0.0))
        self._dense = DenseTurns(self._task) if row.get("dense") else None
        self.turns = [] if self._dense is None else self._dense.turns
        return f"The game has started. Actions: {', '.join(self._names('actions'))}. Truths: {', '.join(self._names('truths'))}."

    def _play(self, name: str) -> Optional[Dict[str, Any]]:
        if self._session is None or self._task is None:
            raise RuntimeError("call reset() first")
        if self._session.finished:
            return None
        step = self._session.respond(f"<ANSWER> {name} </ANSWER>", 0)
        if self._dense is not None:
            self._dense.score(step)
        return step

    def _names(self, field: str) -> List[str]:
        return json.loads(self._task.line)[field] if self._task is not None else []

    def test(self, action: str) -> str:
        """Performs one action of the game and returns what it showed.

        Args:
            action: The name of one of the game's actions, exactly as listed.

        Returns:
            The observation, or why the call did nothing.
        """
        action = parse_answer(action) or ""
        if action not in self._names("actions"):
            return f"`{action}` is not one of the actions: {', '.join(self._names('actions'))}"
        step = self._play(action)
        if step is None:
            return "The game is over."
        text = f"Observation from {step['action']}: {step['observation']}"
        if self._session.finished:
            text += " The step limit is reached: the game is over."
        return text

    def predict(self, truth: str) -> str:
        """Names the truth and ends the game.

        Args:
            truth: The name of one of the game's truths, exactly as listed.

        Returns:
            Whether the prediction was right.
        """
        truth = parse_answer(truth) or ""
        if truth not in self._names("truths"):
            return f"`{truth}` is not one of the truths: {', '.join(self._names('truths'))}"
        step = self._play(truth)
        if step is None:
            return "The game is over."
        return "Correct." if step["successful"] else "Wrong."

    def get_reward(self) -> float:
        """The episode's reward: 0 unless won (with `dense`, the sum of
        the turns' dense rewards)."""
        if self._session is None or self._task is None:
            return 0.0
        if self._dense is not None:
            return self._dense.metrics()["dense_reward"]
        return trial_scores(self._session, self._task, self._efficiency)["reward"]


__all__ = ["KumoToolEnv", "TOOLS_NOTE", "grpo_dataset", "grpo_rows"]
