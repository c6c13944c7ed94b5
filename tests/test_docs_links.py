"""The docs site's link rewrite (docs/hooks.py): READMEs included into pages keep working links."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
HOOKS = Path(__file__).resolve().parents[1] / "docs" / "hooks.py"
_spec = importlib.util.spec_from_file_location("docs_hooks", HOOKS)
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)

PAGES = {"index.md", "cpu_rng.md", "envs/mpe.md", "envs/overcooked.md", "examples/q.ipynb"}
URL = "https://example.org/repo"


def rewrite(text, source="README.md", page="index.md"):
    return hooks.rewrite_links(text, source, page, PAGES, URL)


def test_links_to_files_with_a_page_go_to_the_page_relative_to_the_including_page():
    assert rewrite("[mpe](envs/mpe/README.md)") == "[mpe](envs/mpe.md)"
    assert rewrite("[v2](envs/overcooked/v2/README.md#obs)") == "[v2](envs/overcooked.md#obs)"
    assert rewrite("[rng](docs/cpu_rng.md)") == "[rng](cpu_rng.md)"
    # From a family's README, included into envs/overcooked.md:
    assert (
        rewrite(
            "[home](../../README.md) [rng](../../docs/cpu_rng.md)",
            "envs/x/README.md",
            "envs/overcooked.md",
        )
        == "[home](../index.md) [rng](../cpu_rng.md)"
    )


def test_links_to_other_repository_files_go_to_github_and_missing_ones_stay():
    assert rewrite("[f](benchmarks/FINDINGS.md)") == f"[f]({URL}/blob/main/benchmarks/FINDINGS.md)"
    assert rewrite("[b](benchmarks)") == f"[b]({URL}/tree/main/benchmarks)"
    png = "benchmarks/results/storm_ippo.png"
    assert rewrite(f"![c]({png})") == f"![c]({URL}/raw/main/{png})"
    assert rewrite("[gone](no/such/file.md)") == "[gone](no/such/file.md)"


def test_urls_anchors_and_code_blocks_are_left_alone():
    text = "[a](https://x.org/y.md) [b](#usage) [c](/abs.md)\n```\n[d](envs/mpe/README.md)\n```\n"
    assert rewrite(text) == text
    assert rewrite("```\n[d](envs/mpe/README.md)\n```\n[e](envs/mpe/README.md)").endswith(
        "[e](envs/mpe.md)"
    )
