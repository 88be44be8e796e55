"""The in-tree registry: every default plugin of kube-scheduler v1.35, by name."""

from __future__ import annotations

import functools
import importlib

from kschedlib.config.loader import set_default_registry
from kschedlib.framework.registry import Registry

IN_TREE_PACKAGES = (
    "queuesort",
    "schedulinggates",
    "nodeunschedulable",
    "nodename",
    "tainttoleration",
    "nodeaffinity",
    "nodeports",
    "noderesources",
    "volumerestrictions",
    "nodevolumelimits",
    "volumebinding",
    "volumezone",
    "podtopologyspread",
    "interpodaffinity",
    "dynamicresources",
    "defaultpreemption",
    "imagelocality",
    "defaultbinder",
    "nodedeclaredfeatures",
    "gangscheduling",
)


@functools.lru_cache(maxsize=1)
def _specs() -> Registry:
    reg = Registry()
    for pkg in IN_TREE_PACKAGES:
        module = importlib.import_module(f"kschedlib.plugins.{pkg}")
        for spec in module.PLUGINS:
            reg.register(spec.name, spec.factory, spec.args_type)
    return reg


def in_tree_registry() -> Registry:
    """A fresh Registry holding every default plugin (safe to extend)."""
    return Registry(_specs())


set_default_registry(in_tree_registry)
