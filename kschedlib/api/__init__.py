"""Kubernetes objects the scheduler reads."""
