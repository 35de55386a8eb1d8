"""Domains, generation and labels: thin wrappers over `kumo_gen._native`.

Every function here calls the Rust library in-process; the dicts returned
are the JSON lines `kumo-gen generate` / `kumo-gen label` write, parsed
with `json.loads` (key order kept).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from ._native import Domain

DomainLike = Union[str, "os.PathLike[str]", Domain, Dict[str, Any]]

#: The default memo budget of one instance's optimal search (`--search-budget`).
DEFAULT_SEARCH_BUDGET: int = _native.DEFAULT_SEARCH_BUDGET
#: The default node budget of one instance's optimal search
#: (`--search-nodes`): its time budget, counted in work, not seconds.
DEFAULT_SEARCH_NODES: int = _native.DEFAULT_SEARCH_NODES


def domains(domains_dir: Optional[Union[str, "os.PathLike[str]"]] = None) -> List[str]:
    """Names of the known domains, sorted (`kumo-gen domains`): the shipped
    ones, and those in `domains_dir` (which override them by name)."""
    return _native.domain_names(_path(domains_dir))


def load_domain(
    name_or_path: DomainLike,
    domains_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Domain:
    """Loads and validates a domain: a shipped or `domains_dir` name, a path
    to a `.yaml` file, or a domain document as a dict (the YAML format's
    fields). Returns a `Domain` with `name`, `title`, `truths`, `actions`,
    `warnings`, and `document()` for the document as a dict. Invalid
    domains raise `ValueError` listing every problem."""
    if isinstance(name_or_path, Domain):
        return name_or_path
    if isinstance(name_or_path, dict):
        # JSON is YAML: the document compiles as if read from a file.
        text = json.dumps(name_or_path, ensure_ascii=False)
        return _native.load_domain_text("<dict>", text)
    return _native.load_domain(os.fspath(name_or_path), _path(domains_dir))


def family(
    name: str,
    hypotheses: Optional[int] = None,
    probes: Optional[int] = None,
    seed: int = 0,
    **params: int,
) -> Domain:
    """The domain of a procedural task family (`rules3`, `circuits`,
    `ciphers`, `programs`, `mechanics`, `puzzles`, `opponents`), as
    `kumo-gen family NAME` compiles it; family parameters as keywords
    (`max_value`, `inputs`, `gates`, `alphabet`, `length`, `hard`).
    `family_yaml(...)` gives the file text `kumo-gen family -o` writes."""
    text = family_yaml(name, hypotheses=hypotheses, probes=probes, seed=seed, **params)
    return _native.load_domain_text(f"<{name}>", text)


def family_yaml(
    name: str,
    hypotheses: Optional[int] = None,
    probes: Optional[int] = None,
    seed: int = 0,
    **params: int,
) -> str:
    """The domain file of a procedural task family, byte for byte what
    `kumo-gen family NAME -o FILE` writes."""
    return _native.family_yaml(name, hypotheses, probes, seed, **params)


def _path(p: Optional[Union[str, "os.PathLike[str]"]]) -> Optional[str]:
    return None if p is None else os.fspath(p)


def setting_name(truths: int, actions: int, valid: int = 1) -> str:
    """The setting's file stem, as in `generated/<domain>/<setting>.jsonl`
    (`kumo_gen::dataset::Setting`, the name every kumo-gen command uses)."""
    return _native.setting_name(truths, actions, valid)


def generate_lines(
    domain: DomainLike,
    truths: int = 4,
    actions: int = 6,
    n: int = 50,
    seed: int = 0,
    valid: int = 1,
    *,
    decimals: int = 2,
    allow_shortcuts: bool = False,
    labels: bool = True,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    search_nodes: Optional[int] = None,
    threads: int = 0,
    domains_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    start: int = 0,
    exclude: Sequence[Union[str, "os.PathLike[str]"]] = (),
    exclude_key: str = "exact",
    min_expected: Optional[float] = None,
    max_expected: Optional[float] = None,
    min_golden: Optional[int] = None,
    max_golden: Optional[int] = None,
) -> List[str]:
    """Lines `start..start+n` of `kumo-gen generate --domain D --truths T
    --actions A -n N --seed S --valid V ...`'s dataset file (any N of at
    least `start+n`), byte for byte (without the newlines). The lines before
    `start` are neither drawn, labelled nor rendered: line `i` is the first
    draw of stream `i` whose dedup key no earlier line has, and which draw
    that is comes from the setting's line index, built once and kept in
    the cache directory (docs/performance.md), so the cost does not grow
    with `start` (with `exclude` the earlier lines are drawn again).
    `labels=False` is `--no-labels`; `threads=0` uses
    every core (the output does not depend on it). `exclude` / `exclude_key`
    are `--exclude PATH...` / `--exclude-key`. `min_expected`,
    `max_expected`, `min_golden`, `max_golden` are the difficulty band
    flags (`--min-expected X` ...): line `i` is then the first draw of
    stream `i` inside the band, so the lines before `start` are labelled
    too; a band the setting cannot reach raises `ValueError`. Each line's
    `optimal` labels follow the golden player's rule `generate` states."""
    if start < 0:
        raise ValueError(f"start must be at least 0, not {start}")
    d = load_domain(domain, domains_dir)
    return _native.generate_lines(
        d,
        truths,
        actions,
        n,
        seed=seed,
        valid=valid,
        decimals=decimals,
        allow_shortcuts=allow_shortcuts,
        labels=labels,
        search_budget=search_budget,
        search_nodes=search_nodes,
        threads=threads,
        start=start,
        exclude=[os.fspath(p) for p in exclude],
        exclude_key=exclude_key,
        min_expected=min_expected,
        max_expected=max_expected,
        min_golden=min_golden,
        max_golden=max_golden,
    )


def generate(
    domain: DomainLike,
    truths: int = 4,
    actions: int = 6,
    n: int = 50,
    seed: int = 0,
    valid: int = 1,
    **options: Any,
) -> List[Dict[str, Any]]:
    """Instances `start..start+n-1` (`start=0` by default) of a setting as
    task dicts: KUMO's `truths`, `actions`, `observations`, `seed`,
    `valid_truth`, then `structure` and `optimal` (`expected_steps`,
    `first_action`, `golden_actions`, `golden_trajectory`, `golden_answer`)
    and `difficulty`. The same instances, in the same order, as the CLI
    with the same parameters; `dumps(task)` is the CLI's line. Options as
    for `generate_lines`.

    The golden trajectory (docs/output.md, "The golden player's answer rule") is
    the optimal policy played against the task's own observations. With
    *candidates* the truths no observation so far rules out and *actions
    left* those not yet taken, it answers as soon as at most one candidate
    is left or some candidate is ruled out by no state of any action left
    (with no action left, every candidate is); otherwise it takes the
    optimal action (least exact expected steps, the first in `actions`
    order among ties). `golden_answer` is the first candidate, in `truths`
    order, that no action left can rule out, else the one candidate left:
    with one valid truth (`valid=1`) always the valid truth, possibly while
    other candidates are still consistent (`difficulty` counts them in
    `consistent_at_answer`). The CLI's SFT record plays `golden_trajectory`
    and ends with one assistant turn naming `golden_answer` (with
    `valid` of 2 or more: the first valid candidate in `truths` order)."""
    return [json.loads(line) for line in generate_lines(domain, truths, actions, n, seed, valid, **options)]


def instance(
    domain: DomainLike,
    truths: int = 4,
    actions: int = 6,
    index: int = 0,
    seed: int = 0,
    valid: int = 1,
    **options: Any,
) -> Dict[str, Any]:
    """Instance `index` of a setting: the task whose `dumps(...)` is exactly
    line `index` (0-based) of the file `kumo-gen generate` writes with these
    parameters, in the same time at any index (`generate_lines`). The
    same (domain, setting, seed, index) always gives the same episode, so
    every rollout of a GRPO group can share one. Its `optimal` labels
    follow the golden player's rule `generate` states. Options as for
    `generate_lines`."""
    lines = generate_lines(domain, truths, actions, 1, seed, valid, start=index, **options)
    return json.loads(lines[0])


def task_id(domain_name: str, truths: int, actions: int, valid: int, seed: int, index: int) -> str:
    """The durable id of an instance: `<domain>/<setting>/<seed>/<index>`."""
    return f"{domain_name}/{setting_name(truths, actions, valid)}/{seed}/{index}"


def stamp(
    domain: Domain,
    task: Dict[str, Any],
    truths: int,
    actions: int,
    valid: int,
    seed: int,
    index: int,
) -> Dict[str, Any]:
    """What every Python item carries about its instance: `id`
    (`task_id`), `generator_version`, `domain_hash` (as in `manifest.json`)
    and `difficulty`: the setting (`truths`, `actions`, `valid`) and the
    line's own `difficulty` object (`expected_steps`, the optimal
    expected number of actions: exact when `exact` is true, else a
    certified upper bound with `lower_bound` the proven lower bound and
    `percentile_lower` its percentile (docs/output.md "Certified
    labels"); `golden_length`, the actions the golden player takes on this
    instance; `consistent_at_answer`, the truths no observation along the
    golden trajectory rules out when it answers; `percentile`, of
    `expected_steps` in the setting's fixed reference sample), each `None`
    for an unlabelled line (`lower_bound` and `percentile_lower` also for
    an exact one)."""
    labels = task.get("difficulty") or {}
    labelled = labels.get("expected_steps") is not None
    return {
        "id": task_id(domain.name, truths, actions, valid, seed, index),
        "generator_version": _native.__version__,
        "domain_hash": domain.source_hash,
        "difficulty": {
            "truths": truths,
            "actions": actions,
            "valid": valid,
            "expected_steps": labels.get("expected_steps"),
            "exact": labels.get("exact", True) if labelled else None,
            "lower_bound": labels.get("lower_bound"),
            "golden_length": labels.get("golden_length"),
            "consistent_at_answer": labels.get("consistent_at_answer"),
            "percentile": labels.get("percentile"),
            "percentile_lower": labels.get("percentile_lower"),
        },
    }


def dumps(task: Dict[str, Any]) -> str:
    """A task dict as the CLI writes its line (compact, key order kept,
    numbers in serde_json's shortest form). `json.dumps(task,
    separators=(",", ":"), ensure_ascii=False)` gives the same bytes except
    for floats Python writes with an exponent (below 1e-4 or from 1e16)."""
    return _native.canonical_json(task)


def label(
    domain: DomainLike,
    lines_or_dicts: Iterable[Union[str, Dict[str, Any]]],
    *,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    search_nodes: Optional[int] = None,
    threads: int = 0,
    domains_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> List[Union[str, Dict[str, Any]]]:
    """Adds optimal-search labels to KUMO-format instances (KUMO's published
    ones too), as `kumo-gen label` does: each instance gets `optimal` set
    (added at the end, or replaced). Strings in give strings out (the
    labelled line), dicts give dicts. A search over `search_budget` (memo
    entries) or `search_nodes` (nodes expanded; default 50 000 000 up to 16
    actions, 1 000 000 beyond) gives a certified label (`"exact": False`
    with `lower_bound`, docs/output.md); a
    malformed instance raises `ValueError` naming it. `golden_trajectory`
    and `golden_answer` follow the golden player's rule `generate` states;
    on an instance whose valid truth no action relates to (KUMO's
    shortcuts) the golden player answers at once, with no action."""
    d = load_domain(domain, domains_dir)
    items = list(lines_or_dicts)
    texts = [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in items]
    results = _native.label_lines(
        d, texts, search_budget=search_budget, search_nodes=search_nodes, threads=threads
    )
    out: List[Union[str, Dict[str, Any]]] = []
    for item, (text, _unlabelled, warning) in zip(items, results):
        if warning:
            warnings.warn(warning, stacklevel=2)
        out.append(text if isinstance(item, str) else json.loads(text))
    return out


def parse_answer(text: Optional[str]) -> Optional[str]:
    """The answer in a reply, exactly as `kumo-gen eval` (and KUMO) read it:
    the text after the last `<ANSWER>`, before the next `</ANSWER>`,
    stripped, a `${name}` unwrapped. `None` only for `None`."""
    return _native.parse_answer(text)
