"""kumo-gen games as a `verifiers` environment (`MultiTurnEnv`).

    import kumo_gen.verifiers
    env = kumo_gen.verifiers.load_environment("medical", truths=4, actions=6, n=1000)
    results = env.evaluate_sync(client=..., model="...", num_examples=50)

Needs verifiers with the classic `MultiTurnEnv` API (`pip install
'verifiers>=0.3.1,<0.4'`; verifiers 0.4 replaced it with its v1 stack,
which has no `MultiTurnEnv`).

Each rollout plays one instance with the same Rust session as
`kumo_gen.Env` and `kumo-gen eval` (`kumo_gen::eval::session`): eval's
answer parser, KUMO's observation wording and instruction, KUMO's action
counting, eval's reply limit (`max_steps`; the environment's `max_turns`
stays unlimited so the last reply is still judged). By default every
request is exactly the one eval sends (`exact_history=True`: KUMO's
history, in which the first user turn reads "Begin the game." and only
the newest observation carries the instruction); with
`exact_history=False` the conversation only grows (each observation
message carries the instruction), which suits trainers that need
append-only prompts.

Rewards: `kumo_reward` (weight 1) is `kumo_gen.Env`'s final reward
(success, optionally scaled by the efficiency term, see `kumo_gen.env`);
metrics (weight 0): `kumo_success`, `kumo_action_count` (KUMO's count),
`kumo_parse_error`, `kumo_relative_actions` ((count - (E + 2)) / (E + 2),
`score`'s relative action count; 0 when unlabelled).

Dataset rows: `prompt` (eval's first request for a system-role model),
`answer` (the golden answer), `info` (`line`: the instance line, `index`,
`domain`).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from . import _native
from ._api import DomainLike, generate_lines, load_domain

_ENV_CLASS: Optional[type] = None


def _verifiers() -> Any:
    try:
        import verifiers as vf

        vf.MultiTurnEnv  # noqa: B018  (the classic API, verifiers < 0.4)
    except (ImportError, AttributeError) as e:
        raise ImportError(
            "kumo_gen.verifiers needs verifiers with the classic MultiTurnEnv API: "
            "pip install 'verifiers>=0.3.1,<0.4' (verifiers 0.4 removed MultiTurnEnv)"
        ) from e
    return vf


def _text(message: Any) -> Optional[str]:
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    if content is None or isinstance(content, str):
        return content
    parts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else getattr(part, "type", None)
        text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
        if kind == "text" and text is not None:
            parts.append(text)
    return "".join(parts)


def _tokens(step: Any) -> int:
    usage = getattr(step.get("response"), "usage", None)
    return int(getattr(usage, "total_tokens", 0) or 0)


def _env_class() -> type:
    global _ENV_CLASS
    if _ENV_CLASS is not None:
        return _ENV_CLASS
    vf = _verifiers()
    from verifiers.utils.message_utils import normalize_messages

    class KumoEnv(vf.MultiTurnEnv):
        """KUMO's game, one instance per rollout."""

        def __init__(
            self,
            kumo_domain: Any,
            max_steps: int = 50,
            efficiency: float = 0.0,
            exact_history: bool = True,
            templates_dir: Optional[str] = None,
            **kwargs: Any,
        ) -> None:
            kwargs.setdefault("max_turns", -1)
            super().__init__(**kwargs)
            self.kumo_domain = kumo_domain
            self.kumo_max_steps = max_steps
            self.kumo_efficiency = efficiency
            self.kumo_exact_history = exact_history
            self.kumo_templates_dir = templates_dir

        async def setup_state(self, state: Any, **kwargs: Any) -> Any:
            info = state["info"]
            task = _native.Task(self.kumo_domain, info["line"], self.kumo_templates_dir)
            state["kumo_task"] = task
            state["kumo_session"] = _native.Session(task, state["model"], self.kumo_max_steps)
            return state

        def _sync(self, state: Any) -> Any:
            """Feeds the session the replies it has not seen."""
            session = state["kumo_session"]
            for step in state["trajectory"][session.replies :]:
                if session.finished:
                    break
                completion = step["completion"]
                text = _text(completion[-1]) if completion else None
                session.respond(text, _tokens(step))
            return session

        async def get_prompt_messages(self, state: Any) -> Any:
            session = state["kumo_session"]
            if not state["trajectory"]:
                return normalize_messages(session.request(), field_name="prompt")
            self._sync(state)
            last = state["trajectory"][-1]
            so_far = list(last["prompt"]) + list(last["completion"])
            if session.finished:
                state["final_env_response"] = []
                return so_far
            request = session.request()
            if self.kumo_exact_history:
                return normalize_messages(request, field_name="prompt")
            return so_far + [vf.UserMessage(content=request[-1]["content"])]

        async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
            # Used only by the append-only path of the base class; the
            # session is advanced in get_prompt_messages.
            session = self._sync(state)
            request = session.request()
            return [] if request is None else [vf.UserMessage(content=request[-1]["content"])]

        @vf.cleanup
        async def kumo_finish(self, state: Any) -> None:
            session = state.get("kumo_session")
            if session is None:
                return
            self._sync(state)
            task = state.pop("kumo_task")
            trial = session.trial()
            expected = task.expected_steps
            count = session.action_count
            state["kumo"] = {
                "successful": session.successful,
                "parse_error": bool(trial["parse_error"]),
                "action_count": count,
                "expected_steps": expected,
                "reward": _native.reward(session.successful, count, expected, self.kumo_efficiency),
                "trial": trial,
            }
            state.pop("kumo_session", None)

    _ENV_CLASS = KumoEnv
    return KumoEnv


async def kumo_reward(state: Any, **kwargs: Any) -> float:
    return float(state["kumo"]["reward"])


async def kumo_success(state: Any, **kwargs: Any) -> float:
    return 1.0 if state["kumo"]["successful"] else 0.0


async def kumo_action_count(state: Any, **kwargs: Any) -> float:
    return float(state["kumo"]["action_count"])


async def kumo_parse_error(state: Any, **kwargs: Any) -> float:
    return 1.0 if state["kumo"]["parse_error"] else 0.0


async def kumo_relative_actions(state: Any, **kwargs: Any) -> float:
    e = state["kumo"]["expected_steps"]
    if e is None:
        return 0.0
    return (state["kumo"]["action_count"] - (e + 2.0)) / (e + 2.0)


def _rows(domain: Any, lines: List[str], templates_dir: Optional[str]) -> List[Dict[str, Any]]:
    rows = []
    for i, line in enumerate(lines):
        task = _native.Task(domain, line, templates_dir)
        first = _native.Session(task, "", 1).request()
        instance = json.loads(line)
        valid = instance["valid_truth"]
        answer = (instance.get("optimal") or {}).get("golden_answer") or (valid if isinstance(valid, str) else valid[0])
        rows.append(
            {
                "prompt": first,
                "answer": answer,
                "info": {"line": line, "index": i, "domain": domain.name},
            }
        )
    return rows


def load_environment(
    domain: DomainLike = "medical",
    truths: int = 4,
    actions: int = 6,
    n: int = 1000,
    seed: int = 0,
    *,
    eval_n: int = 0,
    eval_seed: Optional[int] = None,
    valid: int = 1,
    tasks: Optional[List[Any]] = None,
    eval_tasks: Optional[List[Any]] = None,
    max_steps: int = 50,
    efficiency: float = 0.0,
    exact_history: bool = True,
    templates_dir: Optional[str] = None,
    domains_dir: Optional[str] = None,
    generate_options: Optional[Dict[str, Any]] = None,
    **kwargs: Any,
) -> Any:
    """A verifiers `MultiTurnEnv` playing instances `0..n-1` of the setting
    (`kumo_gen.generate(domain, truths, actions, n, seed)`), or `tasks`
    (instance lines or dicts). `eval_n` > 0 adds an eval dataset of
    `eval_n` instances drawn with `eval_seed` (default `seed + 1`; a
    different seed draws independently, so an instance may occur in both),
    or `eval_tasks`. Other keyword arguments go to `MultiTurnEnv`."""
    vf = _verifiers()
    from datasets import Dataset

    if not 0.0 <= efficiency <= 1.0:
        raise ValueError(f"efficiency must be from 0 to 1, not {efficiency}")
    d = load_domain(domain, domains_dir)
    options = dict(generate_options or {})

    def lines_of(given: Optional[List[Any]], count: int, s: int) -> List[str]:
        if given is not None:
            return [t if isinstance(t, str) else json.dumps(t, ensure_ascii=False) for t in given]
        return generate_lines(d, truths, actions, count, s, valid, **options)

    dataset = Dataset.from_list(_rows(d, lines_of(tasks, n, seed), templates_dir))
    eval_dataset = None
    if eval_tasks is not None or eval_n > 0:
        eval_lines = lines_of(eval_tasks, eval_n, seed + 1 if eval_seed is None else eval_seed)
        eval_dataset = Dataset.from_list(_rows(d, eval_lines, templates_dir))
    rubric = vf.Rubric(funcs=[kumo_reward], weights=[1.0])
    for metric in (kumo_success, kumo_action_count, kumo_parse_error, kumo_relative_actions):
        rubric.add_metric(metric)
    return _env_class()(
        kumo_domain=d,
        max_steps=max_steps,
        efficiency=efficiency,
        exact_history=exact_history,
        templates_dir=templates_dir,
        dataset=dataset,
        eval_dataset=eval_dataset,
        rubric=rubric,
        **kwargs,
    )
