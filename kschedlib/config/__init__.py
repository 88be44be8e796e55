"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): loading, defaulting, validation."""

from kschedlib.config.defaults import DEFAULT_MULTI_POINT, default_plugins, merge_plugins
from kschedlib.config.loader import load_config
from kschedlib.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_MULTI_POINT",
    "DEFAULT_SCHEDULER_NAME",
    "KubeSchedulerConfiguration",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
    "default_plugins",
    "load_config",
    "merge_plugins",
]
