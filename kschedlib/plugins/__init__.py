"""Default plugins, one module or package per plugin, named as in kube-scheduler."""
