"""``capacity``: how many replicas of a pod fit, created one after another (cluster-capacity).

Replicas are scheduled in a fork, without preemption. Each replica is named and labelled as a
ReplicaSet would create it, so topology spreading and (anti-)affinity among replicas count.

The replica loop is batched exactly. Replicas share one spec, so when every Filter and Score
plugin that runs for them is node-local (its verdict and raw score on a node depend only on
the pod spec and that node's NodeInfo), a node's filter verdict and raw scores are computed
once and reused until the node changes (the cache reports which nodes did). Everything else
runs as in a scheduling cycle: the round-robin window of percentageOfNodesToScore (a slice of
the sorted feasible positions), nominated pods in filtering, every Score plugin's
normalization on the window, the weights and the tie-breaking random draw. PreFilter and
PreScore run for the replicas too; for a pod without pod (anti-)affinity or spread
constraints, while no running pod has affinity, their state cannot differ between replicas
and is reused. A replica for which any precondition fails goes through the ordinary
``schedule_pod`` path, and so do the first replica and the one that does not fit; the tests
check that the result equals scheduling every replica through ``schedule_pod``.
"""

from kschedlib.whatif.capacity.common import NODE_LOCAL_PLUGINS
from kschedlib.whatif.capacity.loop import capacity
from kschedlib.whatif.capacity.replicas import make_replica, replica_name

__all__ = ["NODE_LOCAL_PLUGINS", "capacity", "make_replica", "replica_name"]
