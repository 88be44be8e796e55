"""NodeName: a pod with spec.nodeName fits only that node."""

from kschedlib.plugins.nodename.node_name import ERR_REASON, NAME, PLUGINS, NodeName, fits, new

__all__ = ["ERR_REASON", "NAME", "PLUGINS", "NodeName", "fits", "new"]
