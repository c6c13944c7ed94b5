"""Typed, frozen configs: dataclass defaults, then a YAML preset, then command-line overrides.

``load_config(PPOConfig, preset, ["run.seed=3", "network.trunk.sizes=[128,128]"])`` starts from
``OmegaConf.structured(PPOConfig)`` (the dataclass defaults and field types), merges the preset,
then each ``key=value`` override (OmegaConf dotlist syntax, nested keys with dots, lists in
brackets), and finally builds the frozen dataclass, so ``__post_init__`` validation runs. An
unknown key, a value of the wrong type, a missing required value or a malformed override raises
``ConfigError`` naming the key, where it came from (preset file or override) and the fix (valid
keys and close matches), before anything imports JAX.

Choices are tagged unions: a field typed ``A | B`` whose members are frozen dataclasses with a
``kind`` class attribute (``MLPTrunkConfig.kind == "mlp"``). OmegaConf has no unions of
dataclasses, so this module handles them itself: in YAML and overrides a choice is written as
its kind (``network.trunk=gru``: that variant with its defaults; naming the kind it already has
keeps its fields), as fields of the current variant (``network.trunk.size=64``), or as a mapping
with the tag (``network.trunk={kind: gru, size: 64}``). A field of another variant, an unknown
kind or field, fails with a ``ConfigError`` that names the fix. ``save_config`` writes each
choice with its ``kind``.

Only omegaconf is used here; hydra, if used at all, stays in the command-line layer. Floats in
YAML files are written ``1.0e-3``: YAML 1.1 readers take ``1e-3`` for a string (typed fields are
converted anyway, but fields typed ``Any``, such as ``env_kwargs`` values, are not).

Presets live in the repository's ``configs/<alg>/<name>.yaml`` and ship in the wheel as
``jaxmarl/configs/`` (see setup.py); ``preset_path(alg, name)`` finds them in either install.

A run directory keeps its config (``save_config``); ``--resume`` reads it back with
``config_from_file`` and ``diff_configs`` lists what a new command line would change. The
header line of a saved config names the config class, the config format and the jaxmarl version
that wrote it: files of an older format are translated when read (``jaxmarl.config_migration``),
files of a newer one fail with a message naming the version that wrote them.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import os
import re
import types
import typing
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from jaxmarl.config_migration import CONFIG_FORMAT, RENAMED_KEYS, migrate
from jaxmarl.files import replace_text

T = TypeVar("T")

_HEADER = (
    "# jaxmarl config {name} (written by jaxmarl.config.save_config, config format {format}, "
    "jaxmarl {version})\n"
)
_HEADER_PATTERN = re.compile(
    r"# jaxmarl config (?P<name>\S+) \(written by jaxmarl\.config\.save_config"
    r"(?:, config format (?P<format>\d+), jaxmarl (?P<version>[^)]+))?\)\s*$"
)


class ConfigError(ValueError):
    """A preset or override does not fit the config dataclass (unknown key, wrong type, ...)."""


# --------------------------------------------------------------------------- loading
def load_config(
    config_cls: type[T],
    preset: str | os.PathLike | None = None,
    overrides: Sequence[str] = (),
) -> T:
    """Builds a frozen ``config_cls`` from its defaults, a YAML preset and ``key=value`` overrides.

    Args:
        config_cls: a dataclass (nested dataclasses, tuples, lists and dicts allowed).
        preset: a YAML file merged over the defaults (``preset_path(alg, name)`` finds packaged
            presets by name), or ``None``.
        overrides: ``"key=value"`` / ``"section.key=value"`` strings applied in order after the
            preset, e.g. ``("lr=1.0e-3", "network.trunk.sizes=[64,64]", "mixer=vdn")``.

    Returns:
        The ``config_cls`` instance (its ``__post_init__`` validation has run).

    Raises:
        ConfigError: an unknown key, a wrong type, a missing required value, a malformed
            override or unreadable YAML; the message names the key, its source and the fix.
        FileNotFoundError: ``preset`` does not exist.
        ValueError: raised by the dataclass's own ``__post_init__`` validation, unchanged.
    """
    return _load(config_cls, preset, overrides, preset_label="preset")


def config_from_file(config_cls: type[T], path: str | os.PathLike) -> T:
    """Reads a config written by ``save_config`` (e.g. ``RUN_DIR/config.yaml`` for ``--resume``).

    A file of an older config format (written by an older jaxmarl: no format in its header) is
    translated first (``jaxmarl.config_migration``), so old run directories still resume.

    Raises:
        ConfigError: the file was written for another config class, by a newer jaxmarl (a config
            format this version does not know; the message names the version), or does not
            fit this one.
        FileNotFoundError: no such file.
    """
    path = Path(path)
    if path.is_file():
        header = _parse_header(path.read_text().partition("\n")[0])
        if header is not None and header[0] != _class_name(config_cls):
            raise ConfigError(
                f"{path} was written for {header[0]}, not {_class_name(config_cls)}; "
                f"resume with the learner that wrote it"
            )
    return _load(config_cls, path, (), preset_label="saved config")


def _load(
    config_cls: type[T],
    preset: str | os.PathLike | None,
    overrides: Sequence[str],
    *,
    preset_label: str,
) -> T:
    from omegaconf import OmegaConf

    if not (isinstance(config_cls, type) and dataclasses.is_dataclass(config_cls)):
        raise TypeError(f"config_cls must be a dataclass type, got {config_cls!r}")
    if isinstance(overrides, str):
        raise TypeError(f"overrides must be a sequence of 'key=value' strings, got {overrides!r}")
    merged = OmegaConf.structured(_schema(config_cls))
    if preset is not None:
        path = Path(preset)
        if not path.is_file():
            raise FileNotFoundError(
                f"{preset_label} {path} does not exist; for a packaged preset use "
                f"jaxmarl.config.preset_path(alg, name) (available: {available_presets()})"
            )
        for base_path, data in _preset_chain(path, preset_label, config_cls):
            merged = _merge(merged, data, config_cls, f"{preset_label} {base_path}")
    for item in overrides:
        source = f"override {item!r}"
        if isinstance(item, str) and item.startswith("~"):
            merged = _remove(merged, item, config_cls, source)
        elif isinstance(item, str) and item.startswith("+"):
            merged = _add(merged, item, config_cls, source)
        else:
            merged = _merge(merged, _parse_override(item), config_cls, source)
    return _instantiate(merged, config_cls)


# --------------------------------------------------------------------------- + and ~
_ADD_HINT = (
    "the config is a typed dataclass, so + adds entries only inside mapping fields such as "
    "env.env_kwargs (+env.env_kwargs.NAME=VALUE); every other key exists already: set it "
    "with KEY=VALUE"
)


def _add(merged: Any, item: str, config_cls: type, source: str) -> Any:
    """hydra's ``+key=value`` (``key`` must be new) and ``++key=value`` (add or set)."""
    force = item.startswith("++")
    body = item[2:] if force else item[1:]
    key = body.partition("=")[0]
    if "=" not in body or not key:
        raise ConfigError(f"{source} must look like +key=value or ++key=value")
    if not force and _has_key(merged, key):
        raise ConfigError(
            f"config key {key!r} in {source} exists already, and + only adds keys; set it with "
            f"{body} (or ++{body}, which adds or sets)"
        )
    try:
        return _merge(merged, _parse_override(body), config_cls, source)
    except ConfigError as error:
        if "unknown config key" not in str(error):
            raise
        raise ConfigError(f"{error} Note: {_ADD_HINT}") from None


def _remove(merged: Any, item: str, config_cls: type, source: str) -> Any:
    """hydra's ``~key`` / ``~key=value``: an entry of a mapping field (``env.env_kwargs``) is
    deleted; a field of the typed config cannot be, so it goes back to the dataclass default
    (what the preset and earlier overrides set is dropped). With ``=value`` the key must
    hold that value."""
    from omegaconf import OmegaConf, open_dict, read_write

    key, has_value, value = item[1:].partition("=")
    if not key:
        raise ConfigError(f"{source} must look like ~key or ~key=value")
    if not _has_key(merged, key):
        suggestions = difflib.get_close_matches(key, _dotted_keys(config_cls), n=3)
        hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        raise ConfigError(f"cannot remove config key {key!r} in {source}: it is not set.{hint}")
    current = OmegaConf.select(merged, key)
    if OmegaConf.is_config(current):
        current = OmegaConf.to_container(current, resolve=True)
    if has_value:
        wanted = OmegaConf.to_container(_parse_override(f"{key}={value}"))
        for part in key.split("."):
            wanted = wanted[part]
        if wanted != current:
            raise ConfigError(
                f"cannot remove config key {key!r} in {source}: it holds {current!r}, not "
                f"{wanted!r} (~KEY=VALUE removes only a matching value; ~KEY removes any)"
            )
    merged = copy.deepcopy(merged)
    parent_key, _, leaf = key.rpartition(".")
    owner, _ = _resolve(config_cls, key)
    if owner is None:  # an entry of a mapping (or of a choice's fields): delete it
        parent = OmegaConf.select(merged, parent_key) if parent_key else merged
        with read_write(parent), open_dict(parent):
            del parent[leaf]
        return merged
    default = OmegaConf.select(OmegaConf.structured(_schema(config_cls)), key)
    if OmegaConf.is_config(default):
        default = OmegaConf.to_container(default)
    OmegaConf.update(merged, key, default, merge=False)
    return merged


def _preset_chain(path: Path, preset_label: str, config_cls: type) -> list[tuple[Path, Any]]:
    """A preset and the presets it ``extends``, base first.

    ``extends: NAME`` (a sibling preset's name or a path relative to the preset's folder)
    merges that preset first, so per-scenario presets can state only what differs.
    """
    chain: list[tuple[Path, Any]] = []
    seen: set[Path] = set()
    while True:
        source = f"{preset_label} {path}"
        if path.resolve() in seen:
            raise ConfigError(f"{source}: 'extends' forms a cycle through {sorted(seen)}")
        seen.add(path.resolve())
        data = _migrate(_read_yaml(path, source), path, source, config_cls)
        base = data.pop("extends", None)
        chain.append((path, data))
        if base is None:
            return chain[::-1]
        base_path = path.parent / str(base)
        if base_path.suffix not in (".yaml", ".yml"):
            base_path = base_path.with_suffix(".yaml")
        if not base_path.is_file():
            raise ConfigError(
                f"{source} extends {base!r}, but {base_path} does not exist; name a preset in "
                f"{path.parent} (without .yaml) or a path relative to it"
            )
        path = base_path


def _read_yaml(path: Path, source: str) -> Any:
    from omegaconf import DictConfig, OmegaConf

    try:
        data = OmegaConf.load(path)
    except Exception as error:  # yaml.YAMLError and friends
        raise ConfigError(f"{source} is not valid YAML: {error}") from error
    if not isinstance(data, DictConfig):
        raise ConfigError(
            f"{source} must hold a mapping of config keys (key: value lines), not a "
            f"{type(data).__name__}"
        )
    return data


def _parse_override(item: str) -> Any:
    from omegaconf import OmegaConf

    if not isinstance(item, str) or "=" not in item or item.startswith(("+", "~", "=")):
        raise ConfigError(
            f"override {item!r} must look like key=value or section.key=value "
            f"(e.g. run.seed=3, network.trunk=gru, network.trunk.size=64), +key=value "
            f"(a new entry of a mapping such as env.env_kwargs) or ~key (remove / reset to the "
            f"default)"
        )
    try:
        return OmegaConf.from_dotlist([item])
    except Exception as error:
        raise ConfigError(f"override {item!r} cannot be parsed: {error}") from error


def _merge(base: Any, update: Any, config_cls: type, source: str) -> Any:
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

    base, update = _apply_choices(base, update, config_cls, source)
    try:
        return OmegaConf.merge(base, update)
    except ConfigKeyError as error:
        raise ConfigError(_unknown_key_message(error.full_key, config_cls, source)) from None
    except OmegaConfBaseException as error:
        raise ConfigError(_bad_value_message(error, base, update, config_cls, source)) from None


def _instantiate(merged: Any, config_cls: type[T]) -> T:
    from omegaconf import OmegaConf
    from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException

    try:
        built = OmegaConf.to_object(merged)
    except MissingMandatoryValue as error:
        raise ConfigError(
            f"config key {error.full_key!r} of {config_cls.__name__} has no default and was not "
            f"set; set it in the preset or with {error.full_key}=VALUE"
        ) from None
    except OmegaConfBaseException as error:
        raise ConfigError(f"cannot build {config_cls.__name__}: {error}") from None
    return _realise(config_cls, built)


# --------------------------------------------------------------------------- tagged unions
def _variants(kind: Any) -> dict[str, type] | None:
    """``{kind tag: variant}`` when ``kind`` is a union of tagged dataclasses, else ``None``."""
    if typing.get_origin(kind) not in (typing.Union, types.UnionType):
        return None
    members = typing.get_args(kind)
    if not all(
        isinstance(m, type)
        and dataclasses.is_dataclass(m)
        and isinstance(m.__dict__.get("kind"), str)
        for m in members
    ):
        return None
    return {m.kind: m for m in members}


def _is_dataclass_type(kind: Any) -> bool:
    return isinstance(kind, type) and dataclasses.is_dataclass(kind)


def _choice_fields(cls: type, prefix: str = "") -> list[tuple[str, dict[str, type]]]:
    """``(dotted key, variants)`` of every tagged-union field of ``cls`` and its sections."""
    found = []
    for name, kind in _field_types(cls).items():
        variants = _variants(kind)
        if variants is not None:
            found.append((prefix + name, variants))
        elif _is_dataclass_type(kind):
            found += _choice_fields(kind, f"{prefix}{name}.")
    return found


@functools.cache
def _schema(cls: type) -> type:
    """``cls`` for OmegaConf: the same dataclass with its union fields typed ``Any`` (holding
    the choice as a tagged mapping), or ``cls`` itself when it has none."""
    if not _choice_fields(cls):
        return cls
    specs = []
    for field in dataclasses.fields(cls):
        kind = _field_types(cls)[field.name]
        default = _default_of(field)
        if _variants(kind) is not None:
            kind = Any
            factory = None if default is None else (lambda d=default: _plain(d()))
        elif _is_dataclass_type(kind) and _schema(kind) is not kind:
            factory = None if default is None else (lambda d=default: _to_schema(d()))
            kind = _schema(kind)
        else:
            specs.append((field.name, kind, _copy_default(field)))
            continue
        spec = (
            dataclasses.field() if factory is None else dataclasses.field(default_factory=factory)
        )
        specs.append((field.name, kind, spec))
    return dataclasses.make_dataclass(cls.__name__, specs, kw_only=True)


def _default_of(field: dataclasses.Field) -> Any:
    """A callable giving ``field``'s default, or ``None`` for a required field."""
    if field.default is not dataclasses.MISSING:
        return lambda: field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory
    return None


def _copy_default(field: dataclasses.Field) -> Any:
    if field.default is not dataclasses.MISSING:
        return dataclasses.field(default=field.default)
    if field.default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=field.default_factory)
    return dataclasses.field()


def _to_schema(value: Any) -> Any:
    """A config instance as an instance of its ``_schema`` class (choices as tagged dicts)."""
    cls = type(value)
    schema = _schema(cls)
    if schema is cls:
        return value
    values = {}
    for name, kind in _field_types(cls).items():
        item = getattr(value, name)
        if _variants(kind) is not None:
            values[name] = _plain(item)
        elif _is_dataclass_type(kind):
            values[name] = _to_schema(item)
        else:
            values[name] = item
    return schema(**values)


def _realise(cls: type[T], built: Any) -> T:
    """The ``_schema(cls)`` instance OmegaConf built, as ``cls`` (runs its validation)."""
    if _schema(cls) is cls:
        return built
    values = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        kind = _field_types(cls)[field.name]
        item = getattr(built, field.name)
        variants = _variants(kind)
        if variants is not None:
            values[field.name] = _build_variant(variants, item)
        elif _is_dataclass_type(kind):
            values[field.name] = _realise(kind, item)
        else:
            values[field.name] = item
    return cls(**values)


def _build_variant(variants: dict[str, type], tagged: Mapping[str, Any]) -> Any:
    from omegaconf import OmegaConf

    fields = {key: value for key, value in tagged.items() if key != "kind"}
    return OmegaConf.to_object(
        OmegaConf.merge(OmegaConf.structured(variants[tagged["kind"]]), fields)
    )


def _apply_choices(base: Any, update: Any, config_cls: type, source: str) -> tuple[Any, Any]:
    """Takes the choices out of ``update`` and sets them in (a copy of) ``base``: OmegaConf
    would merge a mapping into the previous variant's fields instead of replacing them."""
    from omegaconf import DictConfig, OmegaConf

    present = [(key, v) for key, v in _choice_fields(config_cls) if _has_key(update, key)]
    if not present:
        return base, update
    base, update = copy.deepcopy(base), copy.deepcopy(update)
    for key, variants in present:
        parent_key, _, leaf = key.rpartition(".")
        parent = OmegaConf.select(update, parent_key) if parent_key else update
        value = parent[leaf]
        if isinstance(value, DictConfig):
            value = OmegaConf.to_container(value, resolve=True)
        current = OmegaConf.to_container(OmegaConf.select(base, key), resolve=True)
        chosen = _choose(key, variants, current, value, source)
        OmegaConf.update(base, key, chosen, merge=False)
        del parent[leaf]
    return base, update


def _has_key(tree: Any, dotted: str) -> bool:
    from omegaconf import DictConfig

    for part in dotted.split("."):
        if not (isinstance(tree, DictConfig) and part in tree):
            return False
        tree = tree[part]
    return True


def _choose(
    key: str, variants: dict[str, type], current: dict[str, Any], value: Any, source: str
) -> dict[str, Any]:
    """The tagged mapping for choice ``key`` after ``value`` (a kind, fields of the current
    variant, or a mapping with ``kind``) is applied to ``current``."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    kinds = ", ".join(variants)
    forms = (
        f"write {key}=KIND (one of {kinds}), {key}.FIELD=VALUE or "
        f"{key}={{kind: KIND, FIELD: VALUE}}"
    )
    if isinstance(value, str):
        kind, fields = value, {}
    elif isinstance(value, dict):
        fields = dict(value)
        kind = fields.pop("kind", current["kind"])
    else:
        raise ConfigError(f"invalid value for config key {key!r} in {source}: {value!r}; {forms}")
    if kind not in variants:
        close = difflib.get_close_matches(str(kind), list(variants), n=1)
        hint = f" Did you mean {key}={close[0]}?" if close else ""
        raise ConfigError(
            f"unknown kind {kind!r} for config key {key!r} in {source}.{hint} Choose one of "
            f"{kinds} (e.g. {key}={next(iter(variants))})"
        )
    variant = variants[kind]
    names = [field.name for field in dataclasses.fields(variant)]
    for name in fields:
        if name in names:
            continue
        owners = [k for k, v in variants.items() if name in {f.name for f in dataclasses.fields(v)}]
        own = f"its fields: {', '.join(names)}" if names else "it has no fields"
        if owners:
            raise ConfigError(
                f"config key '{key}.{name}' in {source} is a field of {key}={owners[0]}, but "
                f"{key} is {kind} there ({own}). Choose that variant first ({key}={owners[0]} "
                f"before {key}.{name}=...) or set both at once: "
                f"{key}={{kind: {owners[0]}, {name}: ...}}"
            )
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" Did you mean '{key}.{close[0]}'?" if close else ""
        raise ConfigError(
            f"unknown config key '{key}.{name}' in {source}.{hint} {key}={kind}: {own}."
        )
    start = {k: v for k, v in current.items() if k != "kind"} if kind == current["kind"] else {}
    node = OmegaConf.merge(OmegaConf.structured(variant), start)
    for name, item in fields.items():
        try:
            node = OmegaConf.merge(node, {name: item})
        except OmegaConfBaseException as error:
            message = str(getattr(error, "msg", None) or error).split("\n")[0]
            default = OmegaConf.to_container(OmegaConf.structured(variant))[name]
            raise ConfigError(
                f"invalid value for config key '{key}.{name}' in {source}: {message}. Expected "
                f"{_type_name(_field_types(variant)[name])} (default of {key}={kind}: "
                f"{default!r})."
            ) from None
    return {"kind": kind, **OmegaConf.to_container(node)}


# --------------------------------------------------------------------------- error messages
def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(cls)}


def _dotted_keys(cls: type, prefix: str = "") -> list[str]:
    keys = []
    for name, kind in _field_types(cls).items():
        keys.append(prefix + name)
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            keys += _dotted_keys(kind, f"{prefix}{name}.")
        for variant in (_variants(kind) or {}).values():
            keys += [k for k in _dotted_keys(variant, f"{prefix}{name}.") if k not in keys]
    return keys


def _resolve(cls: type, dotted: str) -> tuple[type | None, Any]:
    """(the dataclass holding the last part of ``dotted``, the field's type) or (None, None)."""
    owner: Any = cls
    parts = dotted.split(".")
    for depth, part in enumerate(parts):
        if not (isinstance(owner, type) and dataclasses.is_dataclass(owner)):
            return None, None
        kind = _field_types(owner).get(part)
        if depth == len(parts) - 1:
            return owner, kind
        owner = kind
    return None, None


def _unknown_key_message(full_key: str, config_cls: type, source: str) -> str:
    parent, _, leaf = str(full_key).rpartition(".")
    owner, _ = _resolve(config_cls, f"{parent}.x" if parent else "x")
    valid = sorted(f.name for f in dataclasses.fields(owner)) if owner else []
    where = f"'{parent}' ({owner.__name__})" if parent and owner else config_cls.__name__
    all_keys = _dotted_keys(config_cls)
    suggestions = difflib.get_close_matches(str(full_key), all_keys, n=3, cutoff=0.6)
    suggestions += [k for k in all_keys if k.rpartition(".")[2] == leaf and k not in suggestions]
    hint = f" Did you mean {', '.join(repr(s) for s in suggestions[:3])}?" if suggestions else ""
    renamed = RENAMED_KEYS.get(str(full_key))
    if renamed is not None:
        hint = f" It is a key of config format 1 (an older jaxmarl); write {renamed}."
    return (
        f"unknown config key {full_key!r} in {source}.{hint} Valid keys of {where}: "
        f"{', '.join(valid)}. Fix the name (keys of nested sections take a dot: "
        f"section.key=value)."
    )


def _bad_value_message(error: Any, base: Any, update: Any, config_cls: type, source: str) -> str:
    from omegaconf import Container, OmegaConf

    # Errors inside lists come without a key (and with omegaconf's message template unfilled).
    full_key = str(getattr(error, "full_key", "") or "") or _failing_key(base, update)
    message = str(getattr(error, "msg", None) or error).split("\n")[0]
    if "$VALUE" in message:
        message = f"an element could not be converted ({error.__context__})"
    key = full_key.split("[")[0]
    _, kind = _resolve(config_cls, key) if key else (None, None)
    expected = ""
    if kind is not None:
        default = OmegaConf.select(base, key, default=None)
        if isinstance(default, Container):
            default = OmegaConf.to_container(default)
        shown = f" (default: {default!r})" if default is not None else ""
        expected = f" Expected {_type_name(kind)}{shown}."
    return f"invalid value for config key {full_key!r} in {source}: {message}.{expected}"


def _failing_key(base: Any, update: Any) -> str:
    """The first dotted key of ``update`` that does not merge into ``base`` on its own."""
    from omegaconf import OmegaConf

    for key, value in _flatten(OmegaConf.to_container(update)).items():
        try:
            OmegaConf.merge(base, _nest(key, value))
        except Exception:
            return key
    return ""


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    for part in reversed(dotted.split(".")):
        value = {part: value}
    return value


def _type_name(kind: Any) -> str:
    if isinstance(kind, type) and not typing.get_args(kind):
        return kind.__name__
    return str(kind).replace("typing.", "")


# --------------------------------------------------------------------------- saving
def config_to_dict(cfg: Any) -> dict[str, Any]:
    """A config dataclass as plain nested dicts, lists and scalars (YAML/JSON ready); a choice
    (tagged-union field) is a mapping with its ``kind`` first."""
    if not (dataclasses.is_dataclass(cfg) and not isinstance(cfg, type)):
        raise TypeError(f"config_to_dict takes a dataclass instance, got {type(cfg).__name__}")
    return _plain(cfg)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        kind = type(value).__dict__.get("kind")
        return {"kind": kind, **fields} if isinstance(kind, str) else fields
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def save_config(cfg: Any, path: str | os.PathLike) -> Path:
    """Writes ``cfg`` as YAML (atomically), readable with ``config_from_file`` or as a preset.

    The first line is a comment naming the config class, the config format
    (``CONFIG_FORMAT``) and the jaxmarl version.

    Returns:
        ``path`` as a ``Path``.
    """
    from omegaconf import OmegaConf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    import jaxmarl

    header = _HEADER.format(
        name=_class_name(type(cfg)), format=CONFIG_FORMAT, version=jaxmarl.__version__
    )
    text = header + OmegaConf.to_yaml(OmegaConf.create(config_to_dict(cfg)))
    replace_text(path, text)
    return path


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _parse_header(line: str) -> tuple[str, int, str] | None:
    """``(config class, config format, jaxmarl version)`` from a ``save_config`` header line, or
    ``None`` for any other line. Headers without a format are format 1 (version unknown)."""
    match = _HEADER_PATTERN.match(line.strip())
    if match is None:
        return None
    if match["format"] is None:
        return match["name"], 1, "0.1.0.dev0 or older"
    return match["name"], int(match["format"]), match["version"]


def _migrate(data: Any, path: Path, source: str, config_cls: type) -> Any:
    """A YAML file's mapping in the current config format.

    Files with a ``save_config`` header of an older format, and files without one (presets,
    which may predate the format), are translated (``migrate``, for the choices ``config_cls``
    has); a newer format fails.
    """
    from omegaconf import OmegaConf

    with path.open() as file:
        header = _parse_header(file.readline())
    written = 1 if header is None else header[1]
    if written > CONFIG_FORMAT:
        import jaxmarl

        raise ConfigError(
            f"{source} was written by jaxmarl {header[2]} in config format {written}; this "
            f"jaxmarl ({jaxmarl.__version__}) reads config formats up to {CONFIG_FORMAT}. "
            f"Upgrade jaxmarl to read it"
        )
    if written == CONFIG_FORMAT:
        return data
    plain = OmegaConf.to_container(data)
    migrated = migrate(plain, written, {key for key, _ in _choice_fields(config_cls)})
    return data if migrated == plain else OmegaConf.create(migrated)


def diff_configs(a: Any, b: Any, *, ignore: Collection[str] = ()) -> list[str]:
    """The keys whose values differ between two configs, as ``"key: old -> new"`` lines.

    Args:
        a: the config a run was started with (e.g. ``config_from_file(cls, RUN_DIR/config.yaml)``).
        b: the config asked for now.
        ignore: dotted keys, or section prefixes, allowed to differ (e.g. ``"run.total_timesteps"``
            to extend a run, or ``"run"`` for the whole section).

    Returns:
        One line per differing key (nested keys dotted, ``<absent>`` for a missing key), in the
        fields' order; empty when the configs agree.
    """
    flat_a, flat_b = _flatten(config_to_dict(a)), _flatten(config_to_dict(b))
    lines = []
    for key in list(flat_a) + [k for k in flat_b if k not in flat_a]:
        if any(key == skip or key.startswith(f"{skip}.") for skip in ignore):
            continue
        old, new = flat_a.get(key, _ABSENT), flat_b.get(key, _ABSENT)
        if old != new or type(old) is not type(new):
            lines.append(f"{key}: {_show(old)} -> {_show(new)}")
    return lines


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def _show(value: Any) -> str:
    return repr(value)


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


# --------------------------------------------------------------------------- presets
def configs_dir() -> Path:
    """The folder of packaged presets: ``jaxmarl/configs`` in a wheel, else the checkout's
    ``configs/`` (editable installs and source checkouts keep it next to ``jaxmarl/``).

    Raises:
        FileNotFoundError: neither exists (a broken install).
    """
    import jaxmarl

    package = Path(jaxmarl.__file__).resolve().parent
    candidates = [package / "configs"]
    if (package.parent / "pyproject.toml").is_file():
        candidates.append(package.parent / "configs")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"jaxmarl's presets folder was not found (looked in {[str(c) for c in candidates]}); "
        f"reinstall jaxmarl (pip install -e . in the repository, or the wheel)"
    )


def available_presets(alg: str | None = None) -> list[str]:
    """Preset names ``"<alg>/<name>"`` (or ``"<name>"`` for one ``alg``), sorted."""
    try:
        root = configs_dir()
    except FileNotFoundError:
        return []
    if alg is not None:
        return sorted(p.stem for p in (root / alg).glob("*.yaml"))
    return sorted(f"{p.parent.name}/{p.stem}" for p in root.glob("*/*.yaml"))


def preset_path(alg: str, name: str) -> Path:
    """The packaged preset ``configs/<alg>/<name>.yaml`` (``name`` with or without ``.yaml``).

    Raises:
        FileNotFoundError: no such preset; the message lists the presets there are and close
            matches.
    """
    stem = name[: -len(".yaml")] if name.endswith(".yaml") else name
    root = configs_dir()
    path = root / alg / f"{stem}.yaml"
    if path.is_file():
        return path
    algs = sorted(
        p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    )
    if not (root / alg).is_dir():
        close = difflib.get_close_matches(alg, algs, n=3)
        hint = f" Did you mean {close}?" if close else ""
        raise FileNotFoundError(
            f"no presets for algorithm {alg!r} in {root}.{hint} Algorithms with presets: {algs}"
        )
    names = available_presets(alg)
    close = difflib.get_close_matches(stem, names, n=3)
    hint = f" Did you mean {close}?" if close else ""
    raise FileNotFoundError(
        f"no preset {stem!r} for {alg!r} (looked for {path}).{hint} Presets for {alg!r}: {names}"
    )
