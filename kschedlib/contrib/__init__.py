"""Plugin packages built on kschedlib's public plugin API (not part of kube-scheduler)."""
