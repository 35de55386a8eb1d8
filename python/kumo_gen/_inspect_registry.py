"""Inspect AI's entry point (`[project.entry-points.inspect_ai]`): loading
it registers `kumo_gen/kumo` and the `kumo` model provider."""

from .inspect import KumoPlayerAPI, kumo, kumo_scorer, kumo_solver  # noqa: F401
