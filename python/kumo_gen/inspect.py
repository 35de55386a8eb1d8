"""Inspect AI: the task `kumo_gen/kumo`, its multi-turn solver and scorer,
and the offline players as models `kumo/golden`, `kumo/random`,
`kumo/guess` (needs `inspect-ai`; registered through the `inspect_ai`
entry point, so no import is needed on the command line):

    inspect eval kumo_gen/kumo --model kumo/golden -T domain=medical -T n=8

- `kumo(domain, family, truths, actions, valid, n, seed, start, max_steps,
  efficiency, dense)`: one `Sample` per instance (`kumo_gen.instance`), id
  `<domain>/<setting>/<seed>/<index>`, input eval's first request (the
  system prompt with the knowledge book, then the per-round instruction),
  target the golden answer, metadata the instance line and the stamp
  (`generator_version`, `domain_hash`, `difficulty`); `version` is
  kumo-gen's version.
- `kumo_solver(max_steps)`: plays KUMO's protocol through the native
  session (`kumo_gen.Session`): before each generation the conversation
  is set to the exact request `kumo-gen eval` sends (KUMO's history), the
  completion goes to the session, until a prediction, a parse error or
  `max_steps` replies.
- `kumo_scorer()`: `success` (accuracy, stderr), `action_count`,
  `relative_action_count` ((n - (E + 2)) / (E + 2), as `kumo-gen score`),
  `parse_error` and `reward` (means); with `dense` (`-T dense=true`,
  docs/analytics.md) also `dense_reward` (the sum of the turns' dense
  rewards, `1[proven answer] - total regret`, scored by the library) and
  `total_regret` (means), the turns (`{reward, regret, optimal_actions,
  move}` per reply) in the sample's metadata `kumo_turns` (Inspect scores
  a sample once: it has no per-step reward).
- `KumoPlayerAPI`: the model provider `kumo`; `kumo/<player>` replies as
  the Rust offline player on the task the solver is playing (found by the
  conversation's first message), and sets its token usage (counted words)
  itself, so no tokenizer is downloaded. It plays only `kumo` samples.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.scorer import Score, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

from . import _native
from ._play import DenseTurns, episodes, native_task, resolve_domain, trial_scores
from .players import PLAYERS, reply

# The tasks being played, by their first message (the system prompt):
# how `kumo/<player>` knows the instance behind a conversation.
_PLAYING: Dict[str, Any] = {}


def _chat(messages: List[Dict[str, Any]]) -> List[ChatMessage]:
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"] or "") for m in messages]


def _flag(value: Any) -> bool:
    """A task argument as a bool (`-T dense=true` arrives as text or bool)."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


@task
def kumo(
    domain: str = "medical",
    family: Optional[str] = None,
    family_seed: int = 0,
    truths: int = 4,
    actions: int = 6,
    valid: int = 1,
    n: int = 20,
    seed: int = 0,
    start: int = 0,
    max_steps: int = 50,
    efficiency: float = 0.0,
    dense: bool = False,
) -> Task:
    """KUMO's game on instances `start..start+n` of a setting."""
    d = resolve_domain(domain, family, family_seed)
    samples = []
    for info in episodes(d, int(truths), int(actions), int(valid), int(seed), int(start), int(n)):
        first = [
            {"role": "system", "content": info.pop("system_prompt")},
            {"role": "user", "content": info.pop("instruction")},
        ]
        samples.append(
            Sample(
                id=info["id"],
                input=_chat(first),
                target=info["golden_answer"] or "",
                metadata={**info, "efficiency": float(efficiency), "dense": _flag(dense)},
            )
        )
    return Task(
        dataset=samples,
        solver=kumo_solver(int(max_steps)),
        scorer=kumo_scorer(),
        version=_native.__version__,
    )


@solver
def kumo_solver(max_steps: int = 50) -> Any:
    """Plays one episode per sample through the native session."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        native = native_task(state.metadata)
        session = _native.Session(native, "", max_steps)
        dense = DenseTurns(native) if state.metadata.get("dense") else None
        _PLAYING[native.system_prompt] = native
        try:
            while not session.finished:
                state.messages = _chat(session.request())
                state = await generate(state, tool_calls="none")
                usage = state.output.usage
                step = session.respond(state.output.completion, usage.total_tokens if usage else 0)
                if dense is not None:
                    dense.score(step)
        finally:
            _PLAYING.pop(native.system_prompt, None)
        scores = trial_scores(session, native, state.metadata.get("efficiency", 0.0))
        if dense is not None:
            metrics = dense.metrics()
            scores.update(dense_reward=metrics["dense_reward"], total_regret=metrics["total_regret"])
            state.metadata["kumo_turns"] = json.loads(json.dumps(dense.turns))
        state.metadata["kumo_scores"] = scores
        state.metadata["kumo_trial"] = json.loads(json.dumps(session.trial()))
        return state

    return solve


@scorer(
    metrics={
        "success": [accuracy(), stderr()],
        "action_count": [mean()],
        "relative_action_count": [mean()],
        "parse_error": [mean()],
        "reward": [mean()],
        "dense_reward": [mean()],
        "total_regret": [mean()],
    }
)
def kumo_scorer() -> Any:
    """KUMO's metrics of the episode the solver played."""

    async def score(state: TaskState, target: Target) -> Score:
        scores = dict(state.metadata["kumo_scores"])
        if math.isnan(scores["relative_action_count"]):
            scores.pop("relative_action_count")
        trial = state.metadata["kumo_trial"]
        predicted = [a["predicted_truth"] for a in trial["actions"] if isinstance(a, dict)]
        return Score(value=scores, answer=predicted[0] if predicted else None)

    return score


@modelapi(name="kumo")
class KumoPlayerAPI(ModelAPI):
    """`kumo/golden`, `kumo/random`, `kumo/guess`: the offline players.
    `-M seed=S` seeds the random choices."""

    def __init__(
        self,
        model_name: str,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        config: GenerateConfig = GenerateConfig(),
        seed: int = 0,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in PLAYERS:
            raise ValueError(f"no offline player `{model_name}`; use kumo/{', kumo/'.join(PLAYERS)}")
        self.seed = int(seed)

    async def generate(self, input: List[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        first = input[0].text if input else ""
        native = _PLAYING.get(first)
        if native is None:
            raise RuntimeError(
                f"kumo/{self.model_name} plays only the samples of the task kumo_gen/kumo (its solver)"
            )
        messages = [{"role": m.role, "content": m.text} for m in input]
        r = reply(self.model_name, native, messages, self.seed)
        output = ModelOutput.from_content(self.model_name, r["text"])
        output.usage = ModelUsage(
            input_tokens=r["input_tokens"],
            output_tokens=r["output_tokens"],
            total_tokens=r["input_tokens"] + r["output_tokens"],
        )
        return output


__all__ = ["KumoPlayerAPI", "kumo", "kumo_scorer", "kumo_solver"]
