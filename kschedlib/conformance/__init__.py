"""Conformance runner: kschedlib against recorded kube-scheduler v1.35 decisions."""
