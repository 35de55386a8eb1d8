"""The pieces every framework adapter shares (verifiers, Inspect, TRL):
the episodes of a setting as self-contained dicts, the native task of
one, the scores of a finished session, and its dense per-turn rewards
(`DenseTurns`). No framework is imported here.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterator, List, Optional

from . import _native
from ._api import domains, family, load_domain, stamp
from ._lines import Lines
from ._native import Domain


def resolve_domain(domain: str = "medical", family_name: Optional[str] = None, family_seed: int = 0) -> Domain:
    """A shipped domain name or domain file path, or a task family's domain."""
    if family_name:
        return family(family_name, seed=family_seed)
    return load_domain(domain)


def episodes(
    domain: Domain,
    truths: int,
    actions: int,
    valid: int,
    seed: int,
    start: int,
    count: int,
) -> Iterator[Dict[str, Any]]:
    """Instances `start..start+count` one at a time (made when reached,
    in chunks: `kumo_gen._lines`, so n episodes cost O(n)), as dicts that need no `Domain` to
    travel: `line`, `domain` (name), `domain_document` (the document, for
    domains that are not shipped), `system_prompt` and `instruction`
    (eval's first request), `golden_answer`, and the stamp (`id`,
    `generator_version`, `domain_hash`, `difficulty`)."""
    if count < 1:
        raise ValueError(f"the number of instances must be at least 1, not {count}")
    shipped = domain.name in domains() and load_domain(domain.name).source_hash == domain.source_hash
    document = None if shipped else domain.document()
    lines = Lines(domain, truths, actions, count, seed, valid, start=start)
    for offset, line in enumerate(lines):
        index = start + offset
        task = json.loads(line)
        native = _native.Task(domain, line)
        yield {
            "line": line,
            "domain": domain.name,
            "domain_document": document,
            "system_prompt": native.system_prompt,
            "instruction": native.instruction,
            "golden_answer": (task.get("optimal") or {}).get("golden_answer"),
            **stamp(domain, task, truths, actions, valid, seed, index),
        }


def native_task(info: Dict[str, Any]) -> Any:
    """The native task of an episode dict (`episodes`)."""
    document = info.get("domain_document")
    domain = load_domain(document if document is not None else info["domain"])
    return _native.Task(domain, info["line"])


def trial_scores(session: Any, task: Any, efficiency: float = 0.0) -> Dict[str, float]:
    """The reward and KUMO's four metrics of a session: `reward` (success,
    scaled by the efficiency term, see `kumo_gen.Env`), `success`,
    `action_count` (KUMO's count), `relative_action_count` ((n - (E + 2))
    / (E + 2), as `kumo-gen score`; NaN for an unlabelled instance) and
    `parse_error`."""
    expected = task.expected_steps
    count = session.action_count
    relative = math.nan if expected is None else (count - (expected + 2)) / (expected + 2)
    return {
        "reward": _native.reward(session.successful, count, expected, efficiency),
        "success": 1.0 if session.successful else 0.0,
        "action_count": float(count),
        "relative_action_count": relative,
        "parse_error": 1.0 if session.trial()["parse_error"] else 0.0,
    }


class DenseTurns:
    """The dense rewards of one episode, turn by turn (docs/analytics.md):
    each reply scored by the library (`kumo_gen._native.Moves.score`, the
    one definition `kumo_gen::analysis::dense_reward`). `turns` holds one
    `{reward, regret, optimal_actions, move}` per reply scored."""

    def __init__(self, task: Any) -> None:
        self.moves = _native.Moves(task)
        self.turns: List[Dict[str, Any]] = []

    def score(self, step: Dict[str, Any]) -> Dict[str, Any]:
        """Scores the reply a session's `respond` just read (`step` is what
        it returned: `action` or `truth`, neither for a parse error)."""
        scored = self.moves.score(step.get("action", step.get("truth")))
        self.turns.append(scored)
        return scored

    def rewards(self) -> List[float]:
        return [t["reward"] for t in self.turns]

    def metrics(self) -> Dict[str, float]:
        """`dense_reward` (the turns' sum: `1[proven answer] - total
        regret`), `total_regret` and `proven` (the last answer was)."""
        answers = [t["move"] for t in self.turns if t["move"] is not None and t["move"]["answer"] is not None]
        return {
            "dense_reward": float(sum(self.rewards())),
            "total_regret": float(sum(t["regret"] for t in self.turns)),
            "proven": 1.0 if answers and answers[-1]["proven"] else 0.0,
        }
