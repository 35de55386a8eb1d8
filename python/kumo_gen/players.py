"""The offline players, implemented in the Rust library
(`kumo_gen::eval::players`, the same ones as `kumo-gen eval --player`):

- `golden`: the line's `optimal.golden_trajectory`, one action per
  reply, then `optimal.golden_answer` (needs labelled instances). That
  trajectory is the optimal policy on the instance's own observations: it
  answers as soon as at most one candidate is left or some candidate is
  ruled out by no state of any action left, and names the first such
  candidate in `truths` order (else the one left); with one valid truth
  that is always the valid truth (docs/output.md, "The golden player's answer
  rule"; `kumo_gen.generate` states it in full);
- `random`: a random related action not taken yet; the answer once one
  candidate is left;
- `guess`: a random truth at once (the no-interaction baseline).

A player reads what happened from the request itself (the earlier
assistant turns), so `reply(player, task, session.request())` answers any
round. Random choices are seeded by `seed` and the instance. Token usage
is counted as whitespace-separated words (no tokenizer).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from . import _native

#: The players' names.
PLAYERS: Tuple[str, ...] = tuple(_native.PLAYERS)


def reply(player: str, task: Any, messages: List[Dict[str, Any]], seed: int = 0) -> Dict[str, Any]:
    """`player`'s reply to `messages` (eval's request for the native `task`):
    `{"text", "input_tokens", "output_tokens"}`."""
    return _native.player_reply(player, task, messages, seed)


def play(player: str, task: Any, max_steps: int = 50, seed: int = 0) -> Any:
    """One whole trial of `player` on the native `task`; returns the finished
    native `Session` (`successful`, `action_count`, `trial()`)."""
    session = _native.Session(task, "", max_steps)
    while not session.finished:
        r = reply(player, task, session.request(), seed)
        session.respond(r["text"], r["input_tokens"] + r["output_tokens"])
    return session
