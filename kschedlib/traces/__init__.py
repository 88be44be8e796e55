"""Adapters from published cluster traces to Kubernetes Nodes and Pods."""

from kschedlib.traces.alibaba import (
    GPU_NODE_LIST,
    AlibabaGpuTrace,
    TraceTask,
    load_alibaba_gpu_trace,
    task_list_path,
    task_lists,
)

__all__ = [
    "GPU_NODE_LIST",
    "AlibabaGpuTrace",
    "TraceTask",
    "load_alibaba_gpu_trace",
    "task_list_path",
    "task_lists",
]
