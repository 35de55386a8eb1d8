"""Lines `start..start+n` of a setting's dataset, made when first read and
forgotten soon after: what `Env`, the reasoning-gym datasets and the
framework adapters hold instead of a list of every line.

Line `i` costs the same wherever `i` is (the Rust line index,
`docs/performance.md`), so a read that continues the previous one asks
for the next `CHUNK` lines in one call (made in parallel), and any other
read asks for its line alone. At most `KEEP` chunks are held, so memory
stays flat however many lines are read.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterator, List, Optional

from ._api import generate_lines

CHUNK = 64
KEEP = 4


class Lines:
    """The lines of one setting, lazily (a sequence of `str`)."""

    def __init__(
        self,
        domain: Any,
        truths: int,
        actions: int,
        n: int,
        seed: int,
        valid: int,
        start: int = 0,
        **options: Any,
    ) -> None:
        if n < 1:
            raise ValueError(f"the number of instances must be at least 1, not {n}")
        if start < 0:
            raise ValueError(f"start must be at least 0, not {start}")
        self._args = (domain, truths, actions)
        self._seed = seed
        self._valid = valid
        self._options = options
        self.start = start
        self.n = n
        self._chunks: "OrderedDict[int, List[str]]" = OrderedDict()
        self._last: Optional[int] = None
        # The first line now: a request the setting cannot meet fails here.
        self[0]

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[str]:
        for i in range(self.n):
            yield self[i]

    def __getitem__(self, index: int) -> str:
        if index < 0:
            index += self.n
        if not 0 <= index < self.n:
            raise IndexError(f"index {index} is out of range for {self.n} instances")
        for begin, lines in self._chunks.items():
            if begin <= index < begin + len(lines):
                self._chunks.move_to_end(begin)
                self._last = index
                return lines[index - begin]
        count = min(CHUNK, self.n - index) if self._last == index - 1 else 1
        lines = generate_lines(
            *self._args,
            count,
            self._seed,
            self._valid,
            start=self.start + index,
            **self._options,
        )
        self._chunks[index] = lines
        while len(self._chunks) > KEEP:
            self._chunks.popitem(last=False)
        self._last = index
        return lines[0]
