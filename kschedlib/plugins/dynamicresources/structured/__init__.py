"""The structured-parameters allocator of k8s.io/dynamic-resource-allocation (v1.35), in the
modules Go's ``structured`` package has: the allocator and its search (:mod:`.allocator`),
pools, allocated state, constraints, device matching and consumable capacity. kschedlib's
code imports it from :mod:`kschedlib.plugins.dynamicresources.allocator`."""
