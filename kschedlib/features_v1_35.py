"""Every feature gate kube-scheduler v1.35 registers, as data (stage, default, lock, dependencies
at 1.35, from pkg/features/kube_features.go with the apiserver, client-go, component-base and
controller-manager gates it includes): kube-scheduler's ``--feature-gates`` accepts all of them.

One line per gate: ``Name STAGE default [locked] [-> Dep1,Dep2]`` with STAGE one of ALPHA, BETA,
GA, DEPRECATED. Dependencies are v1.35's (``featuregate.AddDependencies``), sorted as the
registry sorts them. Gates the scheduler reads are described in ``features.py``.
"""

from __future__ import annotations

V1_35_GATE_LINES = """
AllAlpha ALPHA false
AllBeta BETA false
AggregatedDiscoveryRemoveBetaType DEPRECATED true locked
AllowDNSOnlyNodeCSR DEPRECATED false
AllowInsecureKubeletCertificateSigningRequests DEPRECATED false
AllowOverwriteTerminationGracePeriodSeconds DEPRECATED false locked
AllowParsingUserUIDFromCertAuth BETA true
AllowUnsafeMalformedObjectDeletion ALPHA false
AnonymousAuthConfigurableEndpoints GA true locked
AnyVolumeDataSource GA true locked
APIResponseCompression BETA true
APIServerIdentity BETA true
APIServerTracing GA true locked
APIServingWithRoutine ALPHA false
AuthorizeNodeWithSelectors GA true locked -> AuthorizeWithSelectors
AuthorizePodWebsocketUpgradeCreatePermission BETA true
AuthorizeWithSelectors GA true locked
BtreeWatchCache GA true locked
CBORServingAndStorage ALPHA false
ChangeContainerStatusOnKubeletRestart DEPRECATED false
ClearingNominatedNodeNameAfterBinding BETA true
ClientsAllowCBOR ALPHA false
ClientsPreferCBOR ALPHA false
CloudControllerManagerWatchBasedRoutesReconciliation ALPHA false
CloudControllerManagerWebhook ALPHA false
ClusterTrustBundle BETA false
ClusterTrustBundleProjection BETA false -> ClusterTrustBundle
ComponentFlagz ALPHA false
ComponentSLIs GA true locked
ComponentStatusz ALPHA false
ConcurrentWatchObjectDecode BETA false
ConsistentListFromCache GA true locked
ConstrainedImpersonation ALPHA false
ContainerCheckpoint BETA true
ContainerRestartRules BETA true
ContainerStopSignals ALPHA false
ContextualLogging BETA true
CoordinatedLeaderElection BETA false
CPUCFSQuotaPeriod ALPHA false
CPUManagerPolicyAlphaOptions ALPHA false
CPUManagerPolicyBetaOptions BETA true
CPUManagerPolicyOptions GA true locked
CRDObservedGenerationTracking BETA false
CRDValidationRatcheting GA true locked
CrossNamespaceVolumeDataSource ALPHA false
CSIMigrationPortworx GA true locked
CSIServiceAccountTokenSecrets BETA true
CSIVolumeHealth ALPHA false
CustomResourceFieldSelectors GA true locked
DeclarativeValidation BETA true
DeclarativeValidationTakeover BETA false -> DeclarativeValidation
DeploymentReplicaSetTerminatingReplicas BETA true
DetectCacheInconsistency BETA true
DisableAllocatorDualWrite GA true locked -> MultiCIDRServiceAllocator
DisableCPUQuotaWithExclusiveCPUs BETA true
DisableNodeKubeProxyVersion DEPRECATED true
DRAAdminAccess BETA true -> DynamicResourceAllocation
DRAConsumableCapacity ALPHA false -> DynamicResourceAllocation
DRADeviceBindingConditions ALPHA false -> DRAResourceClaimDeviceStatus,DynamicResourceAllocation
DRADeviceTaintRules ALPHA false -> DRADeviceTaints
DRADeviceTaints ALPHA false -> DynamicResourceAllocation
DRAExtendedResource ALPHA false -> DynamicResourceAllocation
DRAPartitionableDevices ALPHA false -> DynamicResourceAllocation
DRAPrioritizedList BETA true -> DynamicResourceAllocation
DRAResourceClaimDeviceStatus BETA true
DRASchedulerFilterTimeout BETA true -> DynamicResourceAllocation
DynamicResourceAllocation GA true locked
EnvFiles BETA true
EventedPLEG ALPHA false
ExecProbeTimeout GA true locked
ExternalServiceAccountTokenSigner BETA true
GangScheduling ALPHA false -> GenericWorkload
GenericWorkload ALPHA false
GitRepoVolumeDriver DEPRECATED false
GracefulNodeShutdown BETA true
GracefulNodeShutdownBasedOnPodPriority BETA true -> GracefulNodeShutdown
HonorPVReclaimPolicy GA true locked
HostnameOverride BETA true
HPAConfigurableTolerance BETA true
HPAScaleToZero ALPHA false
ImageMaximumGCAge GA true locked
ImageVolume BETA true
ImageVolumeWithDigest ALPHA false -> ImageVolume
InformerResourceVersion GA true
InOrderInformers BETA true
InOrderInformersBatchProcess BETA true
InPlacePodLevelResourcesVerticalScaling ALPHA false -> InPlacePodVerticalScaling,NodeDeclaredFeatures,PodLevelResources
InPlacePodVerticalScaling GA true locked
InPlacePodVerticalScalingAllocatedStatus DEPRECATED false -> InPlacePodVerticalScaling
InPlacePodVerticalScalingExclusiveCPUs ALPHA false -> InPlacePodVerticalScaling
InPlacePodVerticalScalingExclusiveMemory ALPHA false -> InPlacePodVerticalScaling,MemoryManager
InTreePluginPortworxUnregister ALPHA false
JobBackoffLimitPerIndex GA true locked
JobManagedBy GA true locked
JobPodReplacementPolicy GA true locked
JobSuccessPolicy GA true locked
KMSv1 DEPRECATED false
KubeletCgroupDriverFromCRI GA true locked
KubeletCrashLoopBackOffMax BETA true
KubeletEnsureSecretPulledImages BETA true
KubeletFineGrainedAuthz BETA true
KubeletInUserNamespace ALPHA false
KubeletPodResourcesDynamicResources BETA true
KubeletPodResourcesGet BETA true
KubeletPodResourcesListUseActivePods DEPRECATED true
KubeletPSI BETA true
KubeletRegistrationGetOnExistsOnly DEPRECATED false
KubeletSeparateDiskGC BETA true
KubeletServiceAccountTokenForCredentialProviders BETA true
KubeletTracing GA true locked
ListFromCacheSnapshot BETA true
LocalStorageCapacityIsolationFSQuotaMonitoring BETA false
LogarithmicScaleDown GA true locked
LoggingAlphaOptions ALPHA false
LoggingBetaOptions BETA true
MatchLabelKeysInPodAffinity GA true locked
MatchLabelKeysInPodTopologySpread BETA true
MatchLabelKeysInPodTopologySpreadSelectorMerge BETA true -> MatchLabelKeysInPodTopologySpread
MaxUnavailableStatefulSet BETA true
MemoryManager GA true locked
MemoryQoS ALPHA false
MultiCIDRServiceAllocator GA true locked
MutableCSINodeAllocatableCount BETA true
MutablePodResourcesForSuspendedJobs ALPHA false
MutablePVNodeAffinity ALPHA false
MutableSchedulingDirectivesForSuspendedJobs ALPHA false
MutatingAdmissionPolicy BETA false
NFTablesProxyMode GA true locked
NodeDeclaredFeatures ALPHA false
NodeInclusionPolicyInPodTopologySpread GA true locked
NodeLogQuery BETA false
NodeSwap GA true locked
NominatedNodeNameForExpectation BETA true
OpenAPIEnums BETA true
OpportunisticBatching BETA true
OrderedNamespaceDeletion GA true locked
PodAndContainerStatsFromCRI ALPHA false
PodCertificateRequest BETA false -> AuthorizeNodeWithSelectors
PodDeletionCost BETA true
PodLevelResources BETA true
PodLifecycleSleepAction GA true locked
PodLifecycleSleepActionAllowZero GA true locked -> PodLifecycleSleepAction
PodLogsQuerySplitStreams ALPHA false
PodObservedGenerationTracking GA true locked
PodReadyToStartContainersCondition BETA true
PodSchedulingReadiness GA true locked
PodTopologyLabelsAdmission BETA true
PortForwardWebsockets BETA true
PreferSameTrafficDistribution GA true locked
PreventStaticPodAPIReferences BETA true
ProcMountType BETA true -> UserNamespacesSupport
QOSReserved ALPHA false
RecoverVolumeExpansionFailure GA true locked
RecursiveReadOnlyMounts GA true locked
ReduceDefaultCrashLoopBackOffDecay ALPHA false
RelaxedDNSSearchValidation GA true locked
RelaxedEnvironmentVariableValidation GA true locked
RelaxedServiceNameValidation ALPHA false
ReloadKubeletServerCertificateFile BETA true
RemoteRequestHeaderUID BETA true
ResilientWatchCacheInitialization GA true locked
ResourceHealthStatus ALPHA false -> DynamicResourceAllocation
RestartAllContainersOnContainerExits ALPHA false -> ContainerRestartRules,NodeDeclaredFeatures
RetryGenerateName GA true locked
RotateKubeletServerCertificate BETA true
RuntimeClassInImageCriAPI ALPHA false
SchedulerAsyncAPICalls BETA false
SchedulerAsyncPreemption BETA true
SchedulerPopFromBackoffQ BETA true
SchedulerQueueingHints GA true locked
SELinuxChangePolicy BETA true
SELinuxMount BETA false
SELinuxMountReadWriteOncePod BETA true
SeparateCacheWatchRPC DEPRECATED false
SeparateTaintEvictionController GA true locked
ServiceAccountNodeAudienceRestriction BETA true
ServiceAccountTokenJTI GA true locked
ServiceAccountTokenNodeBinding GA true locked -> ServiceAccountTokenNodeBindingValidation
ServiceAccountTokenNodeBindingValidation GA true locked
ServiceAccountTokenPodNodeInfo GA true locked
ServiceTrafficDistribution GA true locked
SidecarContainers GA true locked
SizeBasedListCostEstimate BETA true
StatefulSetSemanticRevisionComparison BETA true
StorageCapacityScoring ALPHA false
StorageNamespaceIndex DEPRECATED true
StorageVersionAPI ALPHA false -> APIServerIdentity
StorageVersionHash BETA true
StorageVersionMigrator BETA false
StreamingCollectionEncodingToJSON GA true locked
StreamingCollectionEncodingToProtobuf GA true locked
StrictIPCIDRValidation ALPHA false
StructuredAuthenticationConfiguration GA true locked
StructuredAuthenticationConfigurationEgressSelector BETA true -> StructuredAuthenticationConfiguration
StructuredAuthenticationConfigurationJWKSMetrics BETA true -> StructuredAuthenticationConfiguration
StructuredAuthorizationConfiguration GA true locked
SupplementalGroupsPolicy GA true locked
SystemdWatchdog GA true locked
TaintTolerationComparisonOperators ALPHA false
TokenRequestServiceAccountUIDValidation BETA true
TopologyAwareHints GA true locked
TopologyManagerPolicyAlphaOptions ALPHA false
TopologyManagerPolicyBetaOptions BETA true
TopologyManagerPolicyOptions GA true
TranslateStreamCloseWebsocketRequests BETA true
UnauthenticatedHTTP2DOSMitigation BETA true
UnknownVersionInteroperabilityProxy ALPHA false -> APIServerIdentity
UserNamespacesHostNetworkSupport ALPHA false -> UserNamespacesSupport
UserNamespacesSupport BETA true
VolumeAttributesClass GA true
VolumeLimitScaling ALPHA false
WatchCacheInitializationPostStartHook BETA false
WatchFromStorageWithoutResourceVersion DEPRECATED false locked
WatchList BETA true
WatchListClient BETA true
WindowsCPUAndMemoryAffinity ALPHA false -> MemoryManager
WindowsGracefulNodeShutdown BETA true -> GracefulNodeShutdown
WindowsHostNetwork DEPRECATED false
WinDSR GA true locked
WinOverlay GA true locked
"""
