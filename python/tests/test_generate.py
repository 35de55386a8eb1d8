"""`generate`, `label`, `domains`, `load_domain` against the CLI's bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

import kumo_gen
from conftest import FIXTURES

# (domain, truths, actions, n, seed, valid): string and numeric actions,
# KUMO-imported and native domains, a domain file given by path, and
# several valid truths.
CASES = [
    ("medical", 4, 6, 40, 0, 1),
    ("medical", 12, 16, 8, 3, 1),
    ("mineral-lab", 5, 7, 30, 1, 1),
    ("chemical", 6, 8, 25, 2, 2),
    (str(FIXTURES / "ok" / "tiny.yaml"), 3, 2, 4, 0, 1),
]


def cli_lines(run_cli, tmp_path: Path, domain: str, truths: int, actions: int, n: int, seed: int, valid: int, *extra: str) -> bytes:
    out = tmp_path / "out"
    run_cli(
        "generate", "--domain", domain, "--truths", truths, "--actions", actions,
        "-n", n, "--seed", seed, "--valid", valid, "--out", out, *extra,
    )
    name = kumo_gen.load_domain(domain).name
    path = out / name / (kumo_gen.setting_name(truths, actions, valid) + ".jsonl")
    return path.read_bytes()


@pytest.mark.parametrize("case", CASES, ids=[f"{Path(c[0]).stem}-{c[1]}x{c[2]}-v{c[5]}" for c in CASES])
def test_generate_equals_the_cli_bytes(run_cli, tmp_path: Path, case) -> None:
    domain, truths, actions, n, seed, valid = case
    expected = cli_lines(run_cli, tmp_path, domain, truths, actions, n, seed, valid)
    lines = kumo_gen.generate_lines(domain, truths, actions, n, seed, valid)
    assert "".join(line + "\n" for line in lines).encode() == expected
    tasks = kumo_gen.generate(domain, truths=truths, actions=actions, n=n, seed=seed, valid=valid)
    assert "".join(kumo_gen.dumps(t) + "\n" for t in tasks).encode() == expected
    # Plain json.dumps with compact separators gives the same bytes here.
    plain = "".join(json.dumps(t, separators=(",", ":"), ensure_ascii=False) + "\n" for t in tasks)
    assert plain.encode() == expected
    first = tasks[0]
    assert list(first) == ["truths", "actions", "observations", "seed", "valid_truth", "structure", "optimal", "difficulty"]
    assert list(first["optimal"]) == ["expected_steps", "first_action", "golden_actions", "golden_trajectory", "golden_answer", "exact"]
    assert first["optimal"]["exact"] is True
    assert isinstance(first["optimal"]["golden_actions"], int)
    assert [t["seed"] for t in tasks] == list(range(n))


def test_no_labels_threads_and_decimals_match_the_cli(run_cli, tmp_path: Path) -> None:
    expected = cli_lines(run_cli, tmp_path, "mineral-lab", 4, 6, 20, 5, 1, "--no-labels", "--decimals", "4", "--threads", "1")
    for threads in (1, 2):
        lines = kumo_gen.generate_lines("mineral-lab", 4, 6, 20, 5, labels=False, decimals=4, threads=threads)
        assert "".join(line + "\n" for line in lines).encode() == expected
    assert '"optimal"' not in expected.decode()


def test_label_equals_the_cli(run_cli, tmp_path: Path) -> None:
    tasks = kumo_gen.generate("medical", 5, 7, n=15, seed=9)
    stripped = [{k: v for k, v in t.items() if k != "optimal"} for t in tasks]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(t) + "\n" for t in stripped))
    expected = run_cli("label", "--domain", "medical", "--instances", source).stdout.splitlines()
    lines = source.read_text().splitlines()
    assert kumo_gen.label("medical", lines) == expected
    labelled = kumo_gen.label("medical", stripped)
    assert [t["optimal"] for t in labelled] == [t["optimal"] for t in tasks]
    with pytest.raises(ValueError, match="line 2"):
        kumo_gen.label("medical", [lines[0], '{"truths": ["nope"]}'])


def test_domains_and_load_domain(run_cli) -> None:
    names = kumo_gen.domains()
    listed = [line.split()[0] for line in run_cli("domains").stdout.splitlines()[1:] if line.strip()]
    assert names == listed
    assert "medical" in names and names == sorted(names)
    d = kumo_gen.load_domain("medical")
    assert d.name == "medical" and len(d.truths) == 65 and len(d.actions) == 40
    doc = d.document()
    assert doc["name"] == "medical" and doc["truths"] == d.truths
    # A document given as a dict compiles to the same instances.
    again = kumo_gen.load_domain(doc)
    assert kumo_gen.generate_lines(again, n=5) == kumo_gen.generate_lines(d, n=5)
    assert kumo_gen.load_domain(d) is d


def test_errors_are_value_errors_that_say_how_to_fix() -> None:
    with pytest.raises(ValueError, match="unknown domain `medicl`"):
        kumo_gen.load_domain("medicl")
    with pytest.raises(ValueError, match="--truths"):
        kumo_gen.generate("medical", truths=100, actions=6, n=1)
    with pytest.raises(ValueError, match="unknown truth"):
        kumo_gen.load_domain(str(FIXTURES / "bad" / "domain" / "unknown-truth.yaml"))
    with pytest.raises(ValueError):
        kumo_gen.load_domain({"name": "x", "truths": ["a"], "actions": []})


def test_family_yaml_is_the_clis_file(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    for name in ["rules3", "circuits", "ciphers"]:
        out = tmp_path / f"{name}.yaml"
        run_cli("family", name, "--seed", "3", "-o", out)
        assert kumo_gen.family_yaml(name, seed=3) == out.read_text(encoding="utf-8")
    domain = kumo_gen.family("circuits", hypotheses=50, inputs=3)
    assert domain.name == "circuits" and len(domain.truths) >= 2
    tasks = kumo_gen.generate(domain, 4, 5, n=3)
    assert len(tasks) == 3


def test_generate_with_a_band_equals_the_cli_bytes(run_cli, tmp_path: Path) -> None:
    band = dict(min_expected=1.3, max_expected=1.7, min_golden=2)
    expected = cli_lines(
        run_cli, tmp_path, "medical", 4, 6, 40, 3, 1,
        "--min-expected", 1.3, "--max-expected", 1.7, "--min-golden", 2,
    )
    lines = kumo_gen.generate_lines("medical", 4, 6, 40, 3, **band)
    assert ("\n".join(lines) + "\n").encode() == expected
    for task in kumo_gen.generate("medical", 4, 6, 40, 3, **band):
        d = task["difficulty"]
        assert 1.3 <= d["expected_steps"] <= 1.7 and d["golden_length"] >= 2
        assert 0 <= d["percentile"] <= 100
    # Per-index access keeps line i as instance i under the band.
    assert kumo_gen.dumps(kumo_gen.instance("medical", 4, 6, index=17, seed=3, **band)) == lines[17]
    with pytest.raises(ValueError, match="reach expected steps"):
        kumo_gen.generate("medical", 4, 6, 5, min_expected=9.0)
