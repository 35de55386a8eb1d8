"""reasoning-gym style datasets: `create_dataset(domain, size=, seed=)`.

Each item is a dict with

- `question`: the system prompt `kumo-gen eval` sends for the instance (the
  platform prompt with the instance's knowledge book), byte for byte;
- `answer`: the truth the golden player names (`optimal.golden_answer`:
  with one valid truth, the valid truth; see `kumo_gen.generate` for the
  rule), or the first valid truth of an unlabelled line;
- `metadata`: `source_dataset` (`"kumo"` by default: the name
  `kumo_gen.register_reasoning_gym()` registers, so reasoning-gym's
  `CompositeDataset` finds the dataset that scores an entry),
  `source_index`, `id`, `generator_version`, `domain_hash`, `difficulty`
  (see `kumo_gen.stamp`), `domain`, `setting`,
  `instance` (KUMO's fields and `structure`, as in the dataset line),
  `optimal` (the exact labels), `instruction` (eval's per-round user
  message) and `accepted_answers` (the instance's truths that no
  observation rules out, decided by the Rust judge).

`score_answer(answer, entry)` reads the answer as eval does (the text of
the last `<ANSWER> ... </ANSWER>`, or the bare name) and gives 1.0 when it
names an accepted answer (KUMO's `evaluate_answer`), else 0.0. It needs
only the entry, so entries can be stored and scored elsewhere.

The instances are those of `kumo_gen.generate(domain, truths, actions,
n=size, seed=seed)`; the multi-turn game on them is `kumo_gen.Env`.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Dict, Iterator, Optional

from . import _native
from ._api import DomainLike, load_domain, setting_name, stamp
from ._lines import Lines

KEEP_ITEMS = 256


class KumoDataset:
    """A fixed list of items; indexable, iterable, sized (reasoning-gym's
    `ProceduralDataset` interface). Items are rendered on first access
    (lines in chunks, `kumo_gen._lines`), and only the last few are kept."""

    def __init__(
        self,
        domain: DomainLike,
        size: int = 500,
        seed: int = 0,
        truths: int = 4,
        actions: int = 6,
        valid: int = 1,
        *,
        templates_dir: Optional[str] = None,
        source_dataset: str = "kumo",
        **options: Any,
    ) -> None:
        self.domain = load_domain(domain, options.pop("domains_dir", None))
        self.size = size
        self.seed = seed
        self.source_dataset = source_dataset
        self._setting = (truths, actions, valid)
        self.config = {
            "domain": self.domain.name,
            "size": size,
            "seed": seed,
            "truths": truths,
            "actions": actions,
            "valid": valid,
            **options,
        }
        self.setting = setting_name(truths, actions, valid)
        self._templates_dir = templates_dir
        self._lines = Lines(self.domain, truths, actions, size, seed, valid, **options)
        # The items last read only (a dataset of any size holds a few).
        self._items: "OrderedDict[int, Dict[str, Any]]" = OrderedDict()

    def __len__(self) -> int:
        return len(self._lines)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, index: int) -> Dict[str, Any]:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"index {index} is out of range for {len(self)} items")
        item = self._items.get(index)
        if item is None:
            item = self._item(index)
            self._items[index] = item
            while len(self._items) > KEEP_ITEMS:
                self._items.popitem(last=False)
        return item

    def _item(self, index: int) -> Dict[str, Any]:
        line = self._lines[index]
        task = _native.Task(self.domain, line, self._templates_dir)
        instance = json.loads(line)
        optimal = instance.pop("optimal", None)
        accepted = [t for t in instance["truths"] if task.judge(t)]
        valid = instance["valid_truth"]
        answer = (optimal or {}).get("golden_answer") or (valid if isinstance(valid, str) else valid[0])
        truths, actions, valid_count = self._setting
        stamped = stamp(self.domain, instance, truths, actions, valid_count, self.seed, index)
        return {
            "question": task.system_prompt,
            "answer": answer,
            "metadata": {
                "source_dataset": self.source_dataset,
                "source_index": index,
                **stamped,
                "domain": self.domain.name,
                "setting": self.setting,
                "instance": instance,
                "optimal": optimal,
                "instruction": task.instruction,
                "accepted_answers": accepted,
            },
        }

    def score_answer(self, answer: Optional[str], entry: Dict[str, Any]) -> float:
        return score_answer(answer, entry)


def create_dataset(
    domain: DomainLike,
    size: int = 500,
    seed: int = 0,
    truths: int = 4,
    actions: int = 6,
    **options: Any,
) -> KumoDataset:
    """A reasoning-gym style dataset of `size` instances of `domain`
    (KUMO's easy setting by default: 4 truths, 6 actions). Options:
    `valid`, `decimals`, `allow_shortcuts`, `search_budget`, `search_nodes`,
    `threads`, `templates_dir`, `domains_dir`."""
    return KumoDataset(domain, size=size, seed=seed, truths=truths, actions=actions, **options)


def score_answer(answer: Optional[str], entry: Dict[str, Any]) -> float:
    """1.0 when `answer` names a truth of the entry's instance that no
    observation rules out (KUMO's `evaluate_answer`), else 0.0. The answer
    is read as eval reads a reply: a bare name, or the last
    `<ANSWER> name </ANSWER>`."""
    if answer is None:
        return 0.0
    name = _native.parse_answer(answer)
    accepted = entry.get("metadata", {}).get("accepted_answers", [])
    return 1.0 if name is not None and name in accepted else 0.0
