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
- `instance(domain, truths=, actions=, index=, seed=)`: line `index` of
  the CLI's file alone; `generate(..., start=)` a range; `stamp(...)`:
  the `id`, versions and `difficulty` every item carries;
- `players`: the offline players (`golden`, `random`, `guess`);
- framework adapters, each importing its framework only when used:
  verifiers v1 (`KumoTaskset`/`KumoGameEnv`, exported here and by the
  module `kumo_gen_env`, so the ids `kumo-gen` and `kumo-gen-env`
  resolve), `kumo_gen.inspect` (Inspect AI), `kumo_gen.trl` (TRL's
  `environment_factory`) and `register_reasoning_gym()`.
"""

import importlib.util
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
    instance,
    label,
    load_domain,
    parse_answer,
    setting_name,
    stamp,
    task_id,
)
from ._native import PredictSession, Session, Task, __version__
from .dataset import KumoDataset, create_dataset, score_answer
from .env import Env


__all__ = [
    "DEFAULT_SEARCH_BUDGET",
    "DEFAULT_SEARCH_NODES",
    "Domain",
    "Env",
    "KumoDataset",
    "PredictSession",
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
    "instance",
    "label",
    "load_domain",
    "parse_answer",
    "score_answer",
    "register_reasoning_gym",
    "setting_name",
    "stamp",
    "task_id",
]

# verifiers v1's loader resolves the id `kumo-gen` to this module and takes
# the Taskset and Env subclasses `__all__` exports; they load (with
# verifiers) only when asked for.
_VERIFIERS_CLASSES = ("KumoTaskset", "KumoGameEnv")
if importlib.util.find_spec("verifiers") is not None:
    __all__ += list(_VERIFIERS_CLASSES)


def __getattr__(name: str) -> Any:
    if name in _VERIFIERS_CLASSES:
        import kumo_gen_env

        return getattr(kumo_gen_env, name)
    raise AttributeError(f"module 'kumo_gen' has no attribute {name!r}")


def register_reasoning_gym() -> None:
    """Registers the dataset `kumo` with reasoning-gym
    (`kumo_gen.reasoning_gym.register()`); needs `reasoning-gym`."""
    from .reasoning_gym import register

    register()
