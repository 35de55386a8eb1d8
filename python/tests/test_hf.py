"""The HF export (`kumo-gen --hf`): `datasets.load_dataset` reads every
config of a multi-domain export, with the types the card documents.
`KUMO_GEN_HF_FORMAT=parquet` (set by `.ci/run`, whose binary is built with
the `parquet` feature) makes the test require Parquet files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import datasets


def test_load_dataset_reads_every_config(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    out = tmp_path / "out"
    run_cli("--domain", "medical", "--truths", "5", "--actions", "6", "-n", "12", "--out", out, "--hf")
    run_cli("--domain", "cloud", "--truths", "4", "--actions", "5", "-n", "7", "--out", out, "--hf")
    run_cli("--domain", "medical", "--truths", "4", "--actions", "5", "-n", "3", "--out", out, "--hf")
    export = out / "hf"
    names = datasets.get_dataset_config_names(str(export))
    assert sorted(names) == [
        "cloud-t4-a5-v1",
        "cloud-t4-a5-v1-sft",
        "medical-t4-a5-v1",
        "medical-t4-a5-v1-sft",
        "medical-t5-a6-v1",
        "medical-t5-a6-v1-sft",
    ]
    # The default config loads without naming one.
    default = datasets.load_dataset(str(export), split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert len(default) == 7
    rows = {"cloud-t4-a5-v1": 7, "medical-t4-a5-v1": 3, "medical-t5-a6-v1": 12}
    for name in names:
        data = datasets.load_dataset(str(export), name, split="train", cache_dir=str(tmp_path / "hf-cache"))
        base = name.removesuffix("-sft")
        assert len(data) == rows[base], name
        domain = base.split("-t")[0]
        assert set(data["domain"]) == {domain}
        ids = data["id"]
        assert len(set(ids)) == len(ids) and all(i.startswith(domain + "/") for i in ids)
        if name.endswith("-sft"):
            message = data.features["messages"].feature
            assert {k: v.dtype for k, v in message.items()} == {
                "role": "string",
                "content": "string",
                "weight": "int64",
            }
            for row in data:
                assert all(m["weight"] == (m["role"] == "assistant") for m in row["messages"])
        else:
            assert data.features["expected_steps"].dtype == "float64"
            assert data.features["golden_actions"].dtype == "int64"
            for row in data:
                assert row["golden_actions"] == len(row["golden_trajectory"])
                assert row["golden_answer"] in row["valid_truths"]
    # The files are of the expected format, and the card names only files
    # inside the export.
    fmt = os.environ.get("KUMO_GEN_HF_FORMAT", "jsonl")
    data_files = sorted(p.name for p in (export / "data").rglob("*") if p.is_file())
    assert data_files and all(name.endswith("." + fmt) for name in data_files), data_files
    card = (export / "README.md").read_text()
    assert "../" not in card
    for line in card.splitlines():
        if line.strip().startswith("- \"data/"):
            assert (export / json.loads(line.strip()[2:])).is_file(), line


def test_split_parts_are_configs_of_one_export(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    """`--split train=0.8,test=0.2 --sft-parts train --hf`: one export whose
    configs are the parts, each with a split of its own name."""
    out = tmp_path / "out"
    run_cli(
        "--domain", "medical", "-n", "40", "--split", "train=0.8,test=0.2",
        "--sft-parts", "train", "--hf", "--books", "none", "--out", out,
    )
    export = out / "hf"
    assert sorted(datasets.get_dataset_config_names(str(export))) == ["test", "train", "train-sft"]
    # A private cache: `datasets` may serve an earlier export at the same
    # path from its shared cache.
    test = datasets.load_dataset(str(export), "test", cache_dir=str(tmp_path / "hf-cache"))
    assert list(test) == ["test"] and len(test["test"]) == 8
    train = datasets.load_dataset(str(export), "train", split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert len(train) == 32
    sft = datasets.load_dataset(str(export), "train-sft", split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert sft["id"] == train["id"]
    # No context (truths, actions, valid truths) is in both parts.
    def context(row: Any) -> Any:
        return (tuple(sorted(row["truths"])), tuple(sorted(row["actions"])), tuple(sorted(row["valid_truths"])))

    assert not {context(r) for r in train} & {context(r) for r in test["test"]}
    # Both parts number their seeds from 0; the part in the id keeps ids unique.
    ids = list(train["id"]) + list(test["test"]["id"])
    assert len(set(ids)) == len(ids) == 40
    assert all(i.startswith("train/medical/") for i in train["id"])
    assert all(i.startswith("test/medical/") for i in test["test"]["id"])
