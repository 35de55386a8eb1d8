"""kumo-gen for Python: KUMO-style interactive reasoning tasks with exact
optimal labels, generated in-process by the Rust library.

    import kumo_gen
    tasks = kumo_gen.generate("medical", truths=4, actions=6, n=100, seed=0)
    data = kumo_gen.create_dataset("medical", size=100, seed=0)
    env = kumo_gen.Env("medical", truths=4, actions=6, seed=0, n=100)

- `domains()`, `load_domain(name_or_path_or_dict)`, `family(name, ...)`
  (a procedural task family's domain, as `kumo-gen family`);
- `generate(...)` -> task dicts equal to `kumo-gen generate`'s JSONL lines
  (`dumps(task)` is the line, byte for byte; `generate_lines(...)` the
  lines themselves); `label(domain, lines_or_dicts)` as `kumo-gen label`;
- `create_dataset(...)` / `score_answer(answer, entry)`: reasoning-gym
  style items (`question`, `answer`, `metadata`);
- `Env`: the multi-turn game with `kumo-gen eval`'s protocol
  (`reset(index)`, `step(reply)`);
- `kumo_gen.verifiers.load_environment(...)`: a `verifiers` MultiTurnEnv
  (also `kumo_gen.load_environment`, so `vf.load_environment("kumo-gen")`
  and `vf-eval kumo-gen` find it).
"""

from typing import Any

from ._api import (
    DEFAULT_SEARCH_BUDGET,
    DEFAULT_SEARCH_NODES,
    Domain,
    domains,
    dumps,
    family,
    family_yaml,
    generate,
    generate_lines,
    label,
    load_domain,
    parse_answer,
    setting_name,
)
from ._native import Session, Task, __version__
from .dataset import KumoDataset, create_dataset, score_answer
from .env import Env


def load_environment(**kwargs: Any) -> Any:
    """The verifiers entry point (`vf.load_environment("kumo-gen", ...)`):
    `kumo_gen.verifiers.load_environment(**kwargs)`."""
    from .verifiers import load_environment as load

    return load(**kwargs)


__all__ = [
    "DEFAULT_SEARCH_BUDGET",
    "DEFAULT_SEARCH_NODES",
    "Domain",
    "Env",
    "KumoDataset",
    "Session",
    "Task",
    "__version__",
    "create_dataset",
    "domains",
    "dumps",
    "family",
    "family_yaml",
    "generate",
    "generate_lines",
    "label",
    "load_domain",
    "load_environment",
    "parse_answer",
    "score_answer",
    "setting_name",
]
