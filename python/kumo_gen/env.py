"""The multi-turn game as an environment: `Env(domain, truths, actions, seed)`.

`reset(index)` returns the first request `kumo-gen eval` sends for
instance `index` (the system message, then the per-round instruction);
`step(reply)` feeds the model's reply and returns `(observation, reward,
done, info)`. The game runs in Rust (`kumo_gen::eval::session`): eval's
answer parser, KUMO's observation wording and per-round instruction,
KUMO's action counting (every reply is one action, a prediction adds
one; a reply that names neither an action nor a truth of the instance
ends the episode as a parse error; `max_steps` replies end it
unsuccessful). The same replies give the same trial as `kumo-gen eval`.

`budget=N` plays the budgeted protocol instead (as `kumo-gen eval
--budget N`, the same Rust session): the system prompt states the rule,
each reply is a turn, a wrong answer is told "wrong" (`info["kind"] ==
"wrong"`, the next observation names it) and the episode goes on until
the right answer, a parse error, or the N-th reply (`max_steps` is then
unused).

`observation` is the next user message (KUMO's `Observation from previous
action: {...}` followed by the instruction), or `""` when the episode is
over. For the exact request eval would send next (KUMO keeps a history in
which the first user turn reads "Begin the game." and earlier
observations lack the instruction), use `messages()`.

Reward: 0.0 on every step but the last; on the last, `success` (1.0 when
the named truth is one no observation rules out, else 0.0), scaled by an
optional efficiency term with weight `efficiency` = w in [0, 1]:

    reward = success * ((1 - w) + w * min(1, (E + 2) / n))

where n is the episode's KUMO action count and E + 2 that of optimal
play (E = the instance's `optimal.expected_steps` actions, then the
predicting reply and its `predicted_truth` entry). E is exact, or for a
certified label (`task.exact` false; docs/output.md "Certified labels")
the certified upper bound (the optimum lies in `task.lower_bound`..E), so
the efficiency term is then at least what the exact optimum would give. With w = 0 (default)
the reward is success alone; an episode twice as long as optimal play
earns 1 - w/2.

Dense rewards (opt-in, `dense=True`; docs/analytics.md): every reply is
scored against the exact optimum of the game by the library
(`kumo_gen._native.Moves.score`, the one definition
`kumo_gen::analysis::dense_reward`; no formula here). A reply that takes
an action earns `-regret` (the expected actions it wastes: `Q - V`, 0
for an optimal action, 1 for a repeat); the reply that names a truth
earns 1.0 if the answer is *proven* (the only candidate
left, or one no action left can rule out; a proven answer is always
correct) and 0.0 otherwise, so a lucky guess earns nothing; a parse error
earns 0.0. An episode's rewards sum to

    1[proven answer] - total regret

`info["move"]` holds the move's analysis (`value`, `q`, `regret`,
`optimal`, `candidates`, ...), `info["optimal_actions"]` the optimal
actions of the state the reply answered (empty where answering is
optimal) and `info["regret"]` the move's regret.

Explore, then predict (opt-in, `protocol={"turns": T, "tests": K,
"attempts": s, "feedback": "each"|"end"}`; docs/black-boxes.md): each
episode is the library's explore-then-predict trial
(`kumo_gen._native.PredictSession`, the game `kumo-gen eval --turns`
drives, with eval's defaults `tests=5`, `attempts=1`, `feedback="each"`):
at most T exploration replies naming a probe or `stop`, then K held-out
test inputs predicted with s attempts each. A step returns the next user
message (the probe's output only when the feedback shows it; a verdict
only with more than one attempt) and `info` with `kind` (`probe`,
`stop`, `parse_error`, `prediction`) and `phase`. The reward is 0.0 on
every step but the last, then the accuracy over the tests (the share
predicted right within their attempts, the trial's `predict` record's
`accuracy`). Dense rewards, `budget` and `efficiency` are not defined
under the protocol and are refused with it.

Memory: an `Env` holds the task of the instance it plays and, with
`dense=True`, that instance's search memo, nothing of the instances
before, so one that played 100,000 episodes holds no more than one that
played one. The memo belongs to the line: every `Env` (and adapter) in
the process playing the same line at the same time shares one
(`kumo_gen._native.Moves`; the same rewards as a memo of its own), so a
GRPO group of `Env`s reset to one index searches it once; it is freed
with the last of them. Resetting to the instance being played keeps it.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native
from ._api import DomainLike, load_domain, stamp
from ._lines import Lines

Message = Dict[str, Any]


class Env:
    """KUMO's game on generated (or given) instances of one domain."""

    def __init__(
        self,
        domain: DomainLike,
        truths: int = 4,
        actions: int = 6,
        seed: int = 0,
        n: int = 100,
        *,
        valid: int = 1,
        start: int = 0,
        tasks: Optional[Iterable[Union[str, Dict[str, Any]]]] = None,
        model: str = "",
        max_steps: int = 50,
        efficiency: float = 0.0,
        budget: Optional[int] = None,
        dense: bool = False,
        protocol: Optional[Dict[str, Any]] = None,
        templates_dir: Optional[str] = None,
        domains_dir: Optional[str] = None,
        **options: Any,
    ) -> None:
        """Instances `start..start+n-1` of the setting (as
        `kumo_gen.generate`), or
        `tasks`: instance lines or dicts (a dataset file's lines, KUMO's
        published instances, ...). `model` is the model name eval would be
        given (`gemma`, `claude` and `o1` models get the system prompt as a
        user message, as in KUMO); `max_steps` is eval's `--max-steps`."""
        if not 0.0 <= efficiency <= 1.0:
            raise ValueError(f"efficiency must be from 0 to 1, not {efficiency}")
        if not 1 <= max_steps <= 10_000:
            raise ValueError(f"max_steps must be from 1 to 10000, not {max_steps}")
        if budget is not None and budget < 1:
            raise ValueError("budget must be at least 1")
        self.protocol = _protocol(protocol, budget=budget, dense=dense, efficiency=efficiency)
        self.domain = load_domain(domain, domains_dir)
        if tasks is None:
            self._lines: Sequence[str] = Lines(self.domain, truths, actions, n, seed, valid, start=start, **options)
            self._origin: Optional[Tuple[int, int, int, int, int]] = (truths, actions, valid, seed, start)
        else:
            self._lines = [t if isinstance(t, str) else json.dumps(t, ensure_ascii=False) for t in tasks]
            self._origin = None
        self.model = model
        self.max_steps = max_steps
        self.efficiency = efficiency
        self.budget = budget
        self.dense = dense
        # The current instance's memo only (shared with other live games
        # of the line in the process).
        self._moves: Optional[Tuple[int, Any]] = None
        self._templates_dir = templates_dir
        # The current instance's task only: an Env that played 100,000
        # episodes holds no more than one that played one.
        self._task: Optional[Tuple[int, Any]] = None
        self._session: Optional[Any] = None
        self._index: Optional[int] = None

    def __len__(self) -> int:
        return len(self._lines)

    def instance(self, index: int) -> Dict[str, Any]:
        """Instance `index` as a task dict (with `optimal` when labelled)."""
        return json.loads(self._lines[index])

    def stamp(self, index: int) -> Dict[str, Any]:
        """Instance `index`'s `id`, `generator_version`, `domain_hash` and
        `difficulty` (`kumo_gen.stamp`). For generated instances the id is
        `<domain>/<setting>/<seed>/<start + index>`; for given `tasks`,
        whose generation seed is unknown, `<domain>/<setting>/tasks/<the
        line's seed field>`."""
        task = self.instance(index)
        if self._origin is not None:
            truths, actions, valid, seed, start = self._origin
            return stamp(self.domain, task, truths, actions, valid, seed, start + index)
        valid_truths = task["valid_truth"] if isinstance(task["valid_truth"], list) else [task["valid_truth"]]
        stamped = stamp(self.domain, task, len(task["truths"]), len(task["actions"]), len(valid_truths), 0, index)
        stamped["id"] = stamped["id"].rsplit("/", 2)[0] + f"/tasks/{task.get('seed', index)}"
        return stamped

    def task(self, index: int) -> Any:
        """The native task of instance `index` (`system_prompt`,
        `instruction`, `judge(answer)`)."""
        if self._task is not None and self._task[0] == index:
            return self._task[1]
        task = _native.Task(self.domain, self._lines[index], self._templates_dir)
        self._task = (index, task)
        return task

    def reset(self, index: Optional[int] = None) -> List[Message]:
        """Starts an episode on instance `index` (default: the next one,
        cycling) and returns its first messages: system, then the first
        user message."""
        if index is None:
            index = 0 if self._index is None else (self._index + 1) % len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"index {index} is out of range for {len(self)} instances")
        self._index = index
        if self.protocol is not None:
            self._session = _native.PredictSession(self.task(index), model=self.model, **self.protocol)
            return self._session.request()
        self._session = _native.Session(self.task(index), self.model, self.max_steps, self.budget)
        if self.dense:
            self.moves(index).reset()
        return self._session.request()

    def moves(self, index: int) -> Any:
        """The per-move values of instance `index`'s game
        (`kumo_gen._native.Moves`: `state()`, `step(name)`, `score(name)`,
        `reset()`); the `Env` keeps the last instance's only."""
        if self._moves is not None and self._moves[0] == index:
            return self._moves[1]
        moves = _native.Moves(self.task(index))
        self._moves = (index, moves)
        return moves

    @property
    def index(self) -> Optional[int]:
        return self._index

    @property
    def done(self) -> bool:
        return self._session is None or self._session.finished

    def messages(self) -> Optional[List[Message]]:
        """The exact request `kumo-gen eval` sends for the next reply
        (`None` once the episode is over)."""
        return None if self._session is None else self._session.request()

    def step(self, text: Optional[str], tokens: int = 0) -> Tuple[str, float, bool, Dict[str, Any]]:
        """Feeds one reply (`None`: the model gave no text). Returns the next
        user message (`""` once done), the reward, whether the episode is
        over, and `info`: what the reply led to (`kind` = `observation`
        with `action`/`observation`, `prediction` with `truth`/`successful`,
        `wrong` with `truth` under a `budget`, or `parse_error`), `action_count` (KUMO's), `replies`,
        `successful`, `expected_steps`, `index`, the stamp (`id`,
        `generator_version`, `domain_hash`, `difficulty`), and when done `trial`
        (KUMO's result record of the episode) and `truncated` (the reply
        limit ended it)."""
        session = self._session
        if session is None:
            raise RuntimeError("call reset() before step()")
        if session.finished:
            raise RuntimeError("the episode is over; call reset()")
        info: Dict[str, Any] = session.respond(text, tokens)
        done = session.finished
        if self.protocol is not None:
            return self._predict_step(session, info, done)
        dense_reward = 0.0
        if self.dense:
            # The library scores the reply (kumo_gen::analysis::dense_reward).
            scored = self.moves(self._index).score(info.get("action", info.get("truth")))  # type: ignore[arg-type]
            dense_reward = scored["reward"]
            info.update(move=scored["move"], optimal_actions=scored["optimal_actions"], regret=scored["regret"])
        task = self.task(self._index)  # type: ignore[arg-type]
        info.update(
            self.stamp(self._index),  # type: ignore[arg-type]
            index=self._index,
            action_count=session.action_count,
            replies=session.replies,
            successful=session.successful,
            expected_steps=task.expected_steps,
        )
        if done:
            info["trial"] = session.trial()
            info["truncated"] = info["kind"] in ("observation", "wrong")
            if self.dense:
                return "", dense_reward, True, info
            reward = _native.reward(session.successful, session.action_count, task.expected_steps, self.efficiency)
            return "", reward, True, info
        request = session.request()
        return request[-1]["content"], dense_reward, False, info

    def _predict_step(self, session: Any, info: Dict[str, Any], done: bool) -> Tuple[str, float, bool, Dict[str, Any]]:
        """A step under the explore-then-predict protocol: reward 0.0,
        then the accuracy over the tests at the end."""
        info.update(
            self.stamp(self._index),  # type: ignore[arg-type]
            index=self._index,
            replies=session.replies,
            phase=session.phase,
        )
        if done:
            info.update(trial=session.trial(), successful=session.successful, accuracy=session.accuracy)
            return "", float(session.accuracy), True, info
        request = session.request()
        return request[-1]["content"], 0.0, False, info

    def trial(self) -> Optional[Dict[str, Any]]:
        """The current episode in KUMO's result format."""
        return None if self._session is None else self._session.trial()


_PROTOCOL_FIELDS = ("turns", "tests", "attempts", "feedback")


def _protocol(protocol: Optional[Dict[str, Any]], *, budget: Optional[int], dense: bool, efficiency: float) -> Optional[Dict[str, Any]]:
    """The explore-then-predict settings (checked again by the library),
    or `None` for KUMO's protocol."""
    if protocol is None:
        return None
    if not isinstance(protocol, dict):
        raise ValueError('protocol is a dict: {"turns": T, "tests": K, "attempts": s, "feedback": "each" or "end"}')
    unknown = [k for k in protocol if k not in _PROTOCOL_FIELDS]
    if unknown:
        raise ValueError(f"protocol has no field {unknown[0]!r}: its fields are turns, tests, attempts and feedback")
    if "turns" not in protocol:
        raise ValueError("protocol needs turns: the exploration turns at most, 1 to 1000")
    for key in ("turns", "tests", "attempts"):
        value = protocol.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
            raise ValueError(f"protocol {key} must be a whole number from 1 to 1000, not {value!r}")
    if protocol.get("feedback", "each") not in ("each", "end"):
        raise ValueError(f"protocol feedback is 'each' or 'end', not {protocol['feedback']!r}")
    if budget is not None:
        raise ValueError("protocol and budget are two protocols: give one of them")
    if dense:
        raise ValueError("dense rewards are not defined under protocol (its reward is the accuracy over the tests, at the end): drop dense or protocol")
    if efficiency:
        raise ValueError("efficiency is not defined under protocol (its reward is the accuracy over the tests)")
    return dict(protocol)
