"""DefaultBinder: binds a pod to its node through the host's binder."""

from kschedlib.plugins.defaultbinder.default_binder import NAME, PLUGINS, Binder, DefaultBinder, new

__all__ = ["NAME", "PLUGINS", "Binder", "DefaultBinder", "new"]
