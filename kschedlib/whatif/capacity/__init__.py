"""``capacity``: how many replicas of a pod fit, created one after another (cluster-capacity).

Replicas are scheduled in a fork, without preemption. Each replica is named and labelled as a
ReplicaSet would create it, so topology spreading and (anti-)affinity among replicas count.

The replica loop is batched exactly. Replicas share one spec, so for the Filter and Score
plugins that are node-local (a verdict and raw score on a node depend only on the pod spec
and that node's NodeInfo), a node's filter verdict and raw scores are computed once (the
scores of many nodes in one batch per plugin) and reused until the node changes (the cache
reports which nodes did). PodTopologySpread's and InterPodAffinity's filters judge a node by
its topology values and their PreFilter state, which AddPod keeps up to date replica after
replica: their verdicts are kept per tuple of topology values (``signatures``). Their scores
(ScheduleAnyway spreading, the system-default spreading of a Service, preferred terms,
required affinity through hardPodAffinityWeight) are not node-local but depend on a few
things of a node (its topology values, its own matching pods, its per-node weights) and on
counts kept up to date replica after replica: each node gets a small *soft key*, nodes with
equal keys score alike, and a window is scored per distinct key (``soft``; InterPodAffinity's
PreScore state carried by ``window``). Everything else runs as in a scheduling cycle: the
round-robin window of percentageOfNodesToScore, nominated pods in filtering, every Score
plugin's normalization on the window, the weights and the tie-breaking random draw. A
replica for which any precondition fails goes through the ordinary ``schedule_pod`` path,
and so does the one that does not fit (for its FailedScheduling message); the tests check
that the result equals scheduling every replica through ``schedule_pod``. ``removable_nodes``
uses the same batched cycle for moved pods that are replicas of one another, kept across the
node removals and other changes its drains make.

Modules: ``loop`` (the replica loop), ``batched`` (one replica's batched cycle),
``signatures`` (the kept filter verdicts), ``soft`` (soft-rule scores per soft key),
``window`` (scores on the window), ``replicas`` (ReplicaSet-style replicas), ``common``
(plugin sets).
"""

from kschedlib.whatif.capacity.common import NODE_LOCAL_PLUGINS
from kschedlib.whatif.capacity.loop import capacity
from kschedlib.whatif.capacity.replicas import make_replica, replica_name

__all__ = ["NODE_LOCAL_PLUGINS", "capacity", "make_replica", "replica_name"]
