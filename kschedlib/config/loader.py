"""Load, default and validate a KubeSchedulerConfiguration from a dict, YAML text or a file."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import yaml

from kschedlib.api.codec import FieldError, decode, unknown_fields
from kschedlib.config.defaults import default_plugins, merge_plugins, plugin_names
from kschedlib.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KubeSchedulerConfiguration,
    PluginConfig,
    Plugins,
    PluginSet,
    Profile,
)
from kschedlib.errors import ConfigError, FieldIssue
from kschedlib.features import FeatureGates


class PluginArgsSpec(Protocol):
    """What the loader reads of a registered plugin (a ``framework.registry.PluginSpec``)."""

    @property
    def args_type(self) -> type | None: ...


PluginArgsRegistry = Mapping[str, PluginArgsSpec]
"""Plugins by name, as the loader reads them: a ``kschedlib.framework.Registry`` fits."""

# The in-tree registry lives in plugins/, above config/: kschedlib.plugins.registry sets the
# default here when imported (importing kschedlib does).
_default_registry: list[Callable[[], PluginArgsRegistry]] = []


def set_default_registry(factory: Callable[[], PluginArgsRegistry]) -> None:
    """Make ``factory()`` the registry ``load_config`` validates against when given none."""
    _default_registry[:] = [factory]

_NO_CODE = (lambda: None).__code__

ConfigSource = (
    KubeSchedulerConfiguration | Mapping[str, Any] | str | os.PathLike[str] | None
)


PREFIX = "invalid KubeSchedulerConfiguration: "


def _issue(text: str) -> FieldIssue:
    """``path: message`` as data (every problem this module records has that shape)."""
    path, sep, message = text.partition(": ")
    if not sep or " " in path:
        return FieldIssue("", text)
    return FieldIssue(path, message)


# Fields of KubeSchedulerConfiguration v1 (kschedlib reads some; the others are accepted,
# as kube-scheduler accepts them); anything else is an unknown field (strict decoding).
_TOP_FIELDS = frozenset({
    "apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
    "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
    "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
    "delayCacheUntilActive",
})
_PROFILE_FIELDS = frozenset({"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"})
_PLUGIN_CONFIG_FIELDS = frozenset({"name", "args"})


def _unknown(raw: Mapping[str, Any], allowed: frozenset[str], path: str) -> list[str]:
    return [
        f'unknown field "{path}{k}"' for k in raw if isinstance(k, str) and k not in allowed
    ] + [f"{path.rstrip('.') or '<root>'}: non-string key {k!r}" for k in raw
         if not isinstance(k, str)]


def _fail(errors: list[str]) -> None:
    if errors:
        raise ConfigError(PREFIX + "; ".join(errors), [_issue(e) for e in errors])


def _read_source(source: str | os.PathLike[str]) -> Mapping[str, Any]:
    text: str
    single_line = isinstance(source, str) and "\n" not in source
    if isinstance(source, os.PathLike) or (single_line and os.path.isfile(str(source))):
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            raise ConfigError(f"{os.fspath(source)}: file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{os.fspath(source)}: cannot read: {exc}") from None
    else:
        text = str(source)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid KubeSchedulerConfiguration: not YAML/JSON: {exc}") from None
    except RecursionError:
        raise ConfigError("invalid KubeSchedulerConfiguration: nested too deeply") from None
    if single_line and not isinstance(data, Mapping):
        # A one-line string that is not a mapping was meant as a path.
        raise ConfigError(f"{source}: file not found")
    if not isinstance(data, Mapping):
        raise ConfigError("invalid KubeSchedulerConfiguration: expected a mapping at the top level")
    return data


def _decode_plugins(raw: Any, path: str) -> Plugins:
    try:
        return decode(Plugins, raw, path)
    except FieldError as exc:
        raise ConfigError(
            f"{PREFIX}{exc.path}: {exc.problem}", [FieldIssue(exc.path, exc.problem)]
        ) from None


def _decode_args(
    registry: PluginArgsRegistry,
    name: str,
    raw: Any,
    path: str,
    errors: list[str],
    feature_gates: FeatureGates | None = None,
) -> Any:
    spec = registry.get(name)
    if spec is None or spec.args_type is None:
        return raw
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        errors.append(f"{path}: expected an object")
        return None
    typed = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}  # TypeMeta
    errors.extend(f'unknown field "{u}"' for u in unknown_fields(spec.args_type, typed, path))
    try:
        args: Any = decode(spec.args_type, dict(raw), path)
    except FieldError as exc:
        errors.append(f"{exc.path}: {exc.problem}")
        return None
    validate = getattr(args, "validate", None)
    if validate is not None:
        gated = "feature_gates" in getattr(validate, "__code__", _NO_CODE).co_varnames
        problems = validate(feature_gates=feature_gates) if gated else validate()
        for field, msg in problems:
            errors.append(f"{path}.{field}: {msg}" if field else f"{path}: {msg}")
    return args


def _int_field(raw: Mapping[str, Any], key: str, path: str, errors: list[str]) -> int | None:
    v = raw.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        errors.append(f"{path}{key}: expected integer")
        return None
    return v


def load_config(
    source: ConfigSource = None,
    registry: PluginArgsRegistry | None = None,
    feature_gates: FeatureGates | None = None,
) -> KubeSchedulerConfiguration:
    """Parse, default (as v1.35 does with ``feature_gates``) and validate a configuration;
    ``None`` means defaults.

    Raises ConfigError naming the field path of every problem found.
    """
    if isinstance(source, KubeSchedulerConfiguration):
        return source
    if registry is None:
        registry = _default_registry[0]()
    raw: Mapping[str, Any]
    if source is None:
        raw = {}
    elif isinstance(source, Mapping):
        raw = source
    else:
        raw = _read_source(source)

    errors: list[str] = _unknown(raw, _TOP_FIELDS, "")
    api_version = raw.get("apiVersion", API_VERSION)
    if api_version != API_VERSION:
        errors.append(f'apiVersion: Unsupported value: "{api_version}": supported values: "{API_VERSION}"')
    kind = raw.get("kind", "KubeSchedulerConfiguration")
    if kind != "KubeSchedulerConfiguration":
        errors.append(f'kind: Unsupported value: "{kind}"')

    pct = _int_field(raw, "percentageOfNodesToScore", "", errors)
    initial = _int_field(raw, "podInitialBackoffSeconds", "", errors)
    maximum = _int_field(raw, "podMaxBackoffSeconds", "", errors)
    parallelism = _int_field(raw, "parallelism", "", errors)
    initial = 1 if initial is None else initial
    maximum = 10 if maximum is None else maximum
    parallelism = 16 if parallelism is None else parallelism

    raw_profiles = raw.get("profiles")
    if raw_profiles is None or raw_profiles == []:
        raw_profiles = [{"schedulerName": DEFAULT_SCHEDULER_NAME}]
    if not isinstance(raw_profiles, list):
        errors.append("profiles: expected a list")
        raw_profiles = []

    profiles: list[Profile] = []
    for i, rp in enumerate(raw_profiles):
        path = f"profiles[{i}]"
        if not isinstance(rp, Mapping):
            errors.append(f"{path}: expected an object")
            continue
        errors.extend(_unknown(rp, _PROFILE_FIELDS, f"{path}."))
        if rp.get("plugins"):
            errors.extend(
                f'unknown field "{u}"'
                for u in unknown_fields(Plugins, rp["plugins"], f"{path}.plugins")
            )
        name = rp.get("schedulerName", DEFAULT_SCHEDULER_NAME)
        if not isinstance(name, str):
            errors.append(f"{path}.schedulerName: expected string")
            continue
        prof_pct = _int_field(rp, "percentageOfNodesToScore", f"{path}.", errors)
        custom = _decode_plugins(rp["plugins"], f"{path}.plugins") if rp.get("plugins") else None
        plugins = merge_plugins(default_plugins(feature_gates), custom)
        configs: list[PluginConfig] = []
        seen: set[str] = set()
        raw_pc = rp.get("pluginConfig") or []
        if not isinstance(raw_pc, list):
            errors.append(f"{path}.pluginConfig: expected a list")
            raw_pc = []
        for j, pc in enumerate(raw_pc):
            pc_path = f"{path}.pluginConfig[{j}]"
            if not isinstance(pc, Mapping) or not isinstance(pc.get("name"), str):
                errors.append(f"{pc_path}.name: Required value")
                continue
            pname = pc["name"]
            errors.extend(_unknown(pc, _PLUGIN_CONFIG_FIELDS, f"{pc_path}."))
            if pname in seen:
                errors.append(f'{pc_path}: Duplicate value: "{pname}"')
                continue
            seen.add(pname)
            if pname not in registry:
                errors.append(f'{pc_path}.name: Invalid value: "{pname}": plugin not registered')
                continue
            configs.append(
                PluginConfig(
                    name=pname,
                    args=_decode_args(
                        registry, pname, pc.get("args"), f"{pc_path}.args", errors, feature_gates
                    ),
                )
            )
        # Default args for every enabled plugin without explicit config.
        for pname in plugin_names(plugins):
            if pname in seen:
                continue
            spec = registry.get(pname)
            if spec is not None and spec.args_type is not None:
                configs.append(PluginConfig(name=pname, args=spec.args_type()))
        profile = Profile(
            scheduler_name=name,
            percentage_of_nodes_to_score=prof_pct,
            plugins=plugins,
            plugin_config=tuple(configs),
        )
        errors.extend(_validate_profile(profile, path, registry, custom))
        profiles.append(profile)

    cfg = KubeSchedulerConfiguration(
        profiles=tuple(profiles),
        percentage_of_nodes_to_score=pct,
        pod_initial_backoff_seconds=initial,
        pod_max_backoff_seconds=maximum,
        parallelism=parallelism,
    )
    errors.extend(_validate_config(cfg))
    _fail(errors)
    return cfg


def _validate_profile(
    profile: Profile, path: str, registry: PluginArgsRegistry, custom: Plugins | None
) -> list[str]:
    errors: list[str] = []
    if not profile.scheduler_name:
        errors.append(f"{path}.schedulerName: Required value")
    pct = profile.percentage_of_nodes_to_score
    if pct is not None and not 0 <= pct <= 100:
        errors.append(
            f"{path}.percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]"
        )
    for point in (*EXTENSION_POINTS, "multi_point"):
        ps: PluginSet = profile.plugins.point(point)
        key = "multiPoint" if point == "multi_point" else _camel(point)
        src = custom.point(point) if custom is not None else None
        for k, p in enumerate(ps.enabled):
            if p.name not in registry:
                idx = _index_in(src, p.name)
                where = f"{path}.plugins.{key}.enabled[{idx if idx is not None else k}]"
                errors.append(f'{where}.name: Invalid value: "{p.name}": plugin not registered')
            if p.weight < 0:
                idx = _index_in(src, p.name)
                where = f"{path}.plugins.{key}.enabled[{idx if idx is not None else k}]"
                errors.append(f"{where}.weight: Invalid value: {p.weight}: must not be negative")
    return errors


def _index_in(ps: PluginSet | None, name: str) -> int | None:
    if ps is None:
        return None
    for i, p in enumerate(ps.enabled):
        if p.name == name:
            return i
    return None


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(r.capitalize() for r in rest)


def _validate_config(cfg: KubeSchedulerConfiguration) -> list[str]:
    errors: list[str] = []
    if cfg.parallelism <= 0:
        errors.append(
            f"parallelism: Invalid value: {cfg.parallelism}: should be an integer value greater than zero"
        )
    pct = cfg.percentage_of_nodes_to_score
    if pct is not None and not 0 <= pct <= 100:
        errors.append(f"percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]")
    if cfg.pod_initial_backoff_seconds <= 0:
        errors.append(
            f"podInitialBackoffSeconds: Invalid value: {cfg.pod_initial_backoff_seconds}: must be greater than 0"
        )
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errors.append(
            f"podMaxBackoffSeconds: Invalid value: {cfg.pod_max_backoff_seconds}: "
            "must be greater than or equal to PodInitialBackoffSeconds"
        )
    names: set[str] = set()
    for i, p in enumerate(cfg.profiles):
        if p.scheduler_name in names:
            errors.append(f'profiles[{i}].schedulerName: Duplicate value: "{p.scheduler_name}"')
        names.add(p.scheduler_name)
    if len(cfg.profiles) > 1:
        first = cfg.profiles[0].plugins.queue_sort, _multi_queue_sort(cfg.profiles[0])
        for i, p in enumerate(cfg.profiles[1:], start=1):
            if (p.plugins.queue_sort, _multi_queue_sort(p)) != first:
                errors.append(
                    f"profiles[{i}].plugins.queueSort: Invalid value: "
                    "queueSort must be the same for all profiles"
                )
    return errors


def _multi_queue_sort(p: Profile) -> tuple[str, ...]:
    return tuple(x.name for x in p.plugins.multi_point.enabled if x.name == "PrioritySort")
