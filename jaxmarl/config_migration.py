"""Config formats: what ``save_config`` writes, and the translation of older formats.

``CONFIG_FORMAT`` is written into the header of every saved config. Reading a file of an older
format (a run directory of an older jaxmarl, an old preset) translates its mapping step by step
with ``migrate``; a newer format fails (``jaxmarl.config``).

Format 1 (jaxmarl 0.1.0.dev0 up to the typed choices) had choices as strings beside flat fields
of every variant; format 2 has one tagged mapping per choice:

==================================================  ============================================
format 1                                            format 2
==================================================  ============================================
``network.trunk: mlp``, ``network.trunk_sizes: S``  ``network.trunk: {kind: mlp, sizes: S}``
``network.trunk: gru``, ``network.gru_size: H``,    ``network.trunk: {kind: gru, size: H,``
``network.gru_post_sizes: P``                       ``post_sizes: P}``
``mixer: qmix``, ``mixer_embed_dim: E``,            ``mixer: {kind: qmix, embed_dim: E,``
``mixer_hypernet_hidden_dim: D``,                   ``hypernet_hidden_dim: D, init_scale: I}``
``mixer_init_scale: I``
``mixer: vdn`` / ``mixer: none`` (``mixer_*``)      ``mixer: {kind: vdn}`` / ``{kind: none}``
``returns: n_step``, ``n_step: N`` (``td_lambda``)  ``returns: {kind: n_step, n: N}``
``returns: lambda``, ``td_lambda: L`` (``n_step``)  ``returns: {kind: lambda, td_lambda: L}``
``critic: local`` (``critic_agent_id``)             ``critic: {kind: local}``
``critic: centralised``, ``critic_agent_id: B``     ``critic: {kind: centralised, agent_id: B}``
==================================================  ============================================

Fields of the variants not chosen (a saved format-1 file holds them all) are dropped: they had no
effect. A partial file (a preset) without the choice itself keeps the fields it sets, untagged,
so they apply to whichever variant is chosen when it is merged.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

CONFIG_FORMAT = 2

# Format-1 keys, for error messages about overrides that still use them.
RENAMED_KEYS = {
    "network.trunk_sizes": "network.trunk.sizes (with network.trunk=mlp)",
    "network.gru_size": "network.trunk.size (with network.trunk=gru)",
    "network.gru_post_sizes": "network.trunk.post_sizes (with network.trunk=gru)",
    "mixer_embed_dim": "mixer.embed_dim (with mixer=qmix)",
    "mixer_hypernet_hidden_dim": "mixer.hypernet_hidden_dim (with mixer=qmix)",
    "mixer_init_scale": "mixer.init_scale (with mixer=qmix)",
    "n_step": "returns.n (with returns=n_step)",
    "td_lambda": "returns.td_lambda (with returns=lambda)",
    "critic_agent_id": "critic.agent_id (with critic=centralised)",
}

# choice key -> {kind: {format-1 key: format-2 field}}, keys relative to the choice's section.
_FORMAT_1_CHOICES = {
    ("network", "trunk"): {
        "mlp": {"trunk_sizes": "sizes"},
        "gru": {"gru_size": "size", "gru_post_sizes": "post_sizes"},
    },
    ("", "mixer"): {
        "none": {},
        "vdn": {},
        "qmix": {
            "mixer_embed_dim": "embed_dim",
            "mixer_hypernet_hidden_dim": "hypernet_hidden_dim",
            "mixer_init_scale": "init_scale",
        },
    },
    ("", "returns"): {"n_step": {"n_step": "n"}, "lambda": {"td_lambda": "td_lambda"}},
    ("", "critic"): {"local": {}, "centralised": {"critic_agent_id": "agent_id"}},
}


def migrate(
    data: Mapping[str, Any], written_format: int, choices: Collection[str]
) -> dict[str, Any]:
    """``data`` (a config mapping of format ``written_format``) in ``CONFIG_FORMAT``.

    Args:
        data: the mapping read from a file.
        written_format: the format the file was written in.
        choices: the dotted keys of the config class's choices (``"network.trunk"``,
            ``"mixer"``, ...); only those are translated, so a config class of its own with a
            field named like a format-1 key keeps it.

    Raises:
        ValueError: ``written_format`` is newer than ``CONFIG_FORMAT`` or not a format.
    """
    if not 1 <= written_format <= CONFIG_FORMAT:
        raise ValueError(
            f"config format {written_format} is unknown (this jaxmarl reads 1 to {CONFIG_FORMAT})"
        )
    data = dict(data)
    if written_format == 1:
        data = _from_format_1(data, choices)
    return data


def _from_format_1(data: dict[str, Any], choices: Collection[str]) -> dict[str, Any]:
    for (section, choice), variants in _FORMAT_1_CHOICES.items():
        if (f"{section}.{choice}" if section else choice) not in choices:
            continue
        if not section:
            data = _choice_from_flat(data, choice, variants)
        elif isinstance(data.get(section), Mapping):
            data[section] = _choice_from_flat(dict(data[section]), choice, variants)
    return data


def _choice_from_flat(
    section: dict[str, Any], choice: str, variants: dict[str, dict[str, str]]
) -> dict[str, Any]:
    """``section`` with ``choice: kind`` and its flat fields folded into one mapping."""
    flat = {old: section.pop(old) for keys in variants.values() for old in keys if old in section}
    kind = section.get(choice)
    if not isinstance(kind, str) or kind not in variants:
        if flat:  # no choice here (or already a mapping): the fields apply to the chosen one
            fields = {
                new: flat[old]
                for keys in variants.values()
                for old, new in keys.items()
                if old in flat
            }
            if isinstance(kind, Mapping):
                fields = {**fields, **kind}
            section[choice] = fields
        return section
    fields = {new: flat[old] for old, new in variants[kind].items() if old in flat}
    section[choice] = {"kind": kind, **fields} if fields else kind
    return section
