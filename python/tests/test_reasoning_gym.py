"""reasoning-gym (0.1.25 in CI): `kumo` registers as a real
ProceduralDataset, builds from defaults, and scores inside a
CompositeDataset."""

from __future__ import annotations

import kumo_gen
from conftest import need

rg = need("reasoning_gym")
composite = need("reasoning_gym.composite")


def test_create_dataset_from_defaults_and_score() -> None:
    kumo_gen.register_reasoning_gym()
    kumo_gen.register_reasoning_gym()  # a second call does nothing
    data = rg.create_dataset("kumo", size=4, seed=2)
    assert len(data) == 4 and isinstance(data, rg.dataset.ProceduralDataset)
    entries = list(data)
    for i, entry in enumerate(entries):
        meta = entry["metadata"]
        assert meta["source_dataset"] == "kumo" and meta["source_index"] == i
        assert meta["id"] == f"medical/truth_num=4+action_num=6+valid_truth_num=1/2/{i}"
        assert meta["difficulty"]["expected_steps"] == meta["optimal"]["expected_steps"]
        assert {**meta["instance"], "optimal": meta["optimal"]} == kumo_gen.instance("medical", index=i, seed=2)
        assert data.score_answer(entry["answer"], entry) == 1.0
        assert data.score_answer(f"<ANSWER> {entry['answer']} </ANSWER>", entry) == 1.0
        wrong = next(t for t in meta["instance"]["truths"] if t not in meta["accepted_answers"])
        assert data.score_answer(wrong, entry) == 0.0
    other = rg.create_dataset("kumo", size=2, seed=2, domain="mineral-lab", truths=5, actions=7)
    assert other[1]["metadata"]["domain"] == "mineral-lab"
    assert rg.get_score_answer_fn("kumo")(entries[0]["answer"], entries[0]) == 1.0


def test_a_composite_with_a_builtin_task_scores_kumo_entries() -> None:
    kumo_gen.register_reasoning_gym()
    config = composite.CompositeConfig(
        size=12,
        seed=5,
        datasets=[
            composite.DatasetSpec(name="kumo", weight=1.0, config={"truths": 4, "actions": 6}),
            composite.DatasetSpec(name="mini_sudoku", weight=1.0, config={}),
        ],
    )
    mixed = composite.CompositeDataset(config)
    kumo_entries = [e for e in mixed if e["metadata"]["source_dataset"] == "kumo"]
    assert kumo_entries
    for entry in kumo_entries:
        assert mixed.score_answer(entry["answer"], entry) == 1.0
