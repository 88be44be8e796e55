"""Pod signature fragments shared by the default plugins' ``sign_pod`` (SignPod)."""

from __future__ import annotations

from kschedlib.api.pod import Pod


def volumes_signable(pod: Pod) -> bool:
    """Whether the pod's volumes leave volume plugins nothing to check: only ConfigMap,
    Secret and emptyDir volumes (kube-scheduler leaves ConfigMap and Secret out of the
    signature; emptyDir needs no node)."""
    for v in pod.spec.volumes:
        if v.config_map is None and v.secret is None and v.empty_dir is None:
            return False
    return True
