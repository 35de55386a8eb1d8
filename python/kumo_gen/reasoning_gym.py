"""reasoning-gym registration: the dataset `kumo`, a real
`reasoning_gym.dataset.ProceduralDataset` (needs `reasoning-gym`).

    import kumo_gen, reasoning_gym
    kumo_gen.register_reasoning_gym()
    data = reasoning_gym.create_dataset("kumo", size=4, seed=2, domain="medical")

`KumoDatasetConfig` is a dataclass with every field defaulted (`domain`,
`truths`, `actions`, `valid`, `seed`, `size`; `seed=None` draws a random
seed, as reasoning-gym does). Item `i` is instance `i` of
`kumo_gen.generate(domain, truths, actions, n=size, seed=seed)`, made
lazily when first read (in chunks when read in order, `kumo_gen._lines`), in the format of
`kumo_gen.create_dataset`: `metadata.source_dataset` is `"kumo"` (so a
`CompositeDataset` scores it), `metadata.difficulty` is the stamp's
difficulty (truths, actions, expected steps, golden length, ...).

What an item is: `question` is the system prompt of KUMO's multi-turn game
(the platform prompt and the knowledge book) and has no observations, so a
single-turn answer is a guess (1/truths expected). The items seed the
multi-turn game (`kumo_gen.Env`, the verifiers, Inspect and TRL adapters);
scoring names a truth no observation rules out.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Optional

from reasoning_gym.dataset import ProceduralDataset
from reasoning_gym.factory import DATASETS, register_dataset

from . import _native
from ._api import load_domain, setting_name, stamp
from ._lines import Lines
from .dataset import KEEP_ITEMS, score_answer

NAME = "kumo"


@dataclass
class KumoDatasetConfig:
    domain: str = "medical"
    truths: int = 4
    actions: int = 6
    valid: int = 1
    seed: Optional[int] = None
    size: int = 500

    def validate(self) -> None:
        assert self.size >= 1, "size must be at least 1"
        assert self.truths >= 2 and self.actions >= 1, "truths >= 2 and actions >= 1"
        assert 1 <= self.valid < self.truths, "valid is from 1 to truths - 1"
        load_domain(self.domain)


class KumoProceduralDataset(ProceduralDataset):
    def __init__(self, config: KumoDatasetConfig) -> None:
        super().__init__(config=config, seed=config.seed, size=config.size)
        self.domain = load_domain(config.domain)
        c = config
        self._lines = Lines(self.domain, c.truths, c.actions, c.size, self.seed, c.valid)
        # The items last read only: memory stays flat at any size.
        self._items: "OrderedDict[int, Dict[str, Any]]" = OrderedDict()

    def __getitem__(self, idx: int) -> Dict[str, Any]:
        if not 0 <= idx < self.size:
            raise IndexError(f"index {idx} is out of range for {self.size} items")
        item = self._items.get(idx)
        if item is None:
            item = self._item(idx)
            self._items[idx] = item
            while len(self._items) > KEEP_ITEMS:
                self._items.popitem(last=False)
        return item

    def _item(self, idx: int) -> Dict[str, Any]:
        c = self.config
        line = self._lines[idx]
        task = json.loads(line)
        native = _native.Task(self.domain, line)
        optimal = task.pop("optimal", None)
        accepted = [t for t in task["truths"] if native.judge(t)]
        return {
            "question": native.system_prompt,
            "answer": (optimal or {}).get("golden_answer") or accepted[0],
            "metadata": {
                "source_dataset": NAME,
                "source_index": idx,
                **stamp(self.domain, task, c.truths, c.actions, c.valid, self.seed, idx),
                "domain": self.domain.name,
                "setting": setting_name(c.truths, c.actions, c.valid),
                "instance": task,
                "optimal": optimal,
                "instruction": native.instruction,
                "accepted_answers": accepted,
            },
        }

    def score_answer(self, answer: Optional[str], entry: Dict[str, Any]) -> float:
        return score_answer(answer, entry)


def register() -> None:
    """Registers `kumo` (once; a second call does nothing)."""
    if NAME not in DATASETS:
        register_dataset(NAME, KumoProceduralDataset, KumoDatasetConfig)


__all__ = ["KumoDatasetConfig", "KumoProceduralDataset", "NAME", "register"]
