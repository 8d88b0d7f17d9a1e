/**
 * The finalizers of Kubernetes itself (the garbage collector, the namespace, job and CRD
 * controllers, the storage protections) and of the CSI sidecars and snapshot controller. Pure data.
 */
import type { ControllerMatcher, FinalizerInfo } from "./finalizer-info.js";

const SNAPSHOT_CONTROLLER: ControllerMatcher = {
  labels: [["app.kubernetes.io/name", "snapshot-controller"]],
  nameIncludes: ["snapshot-controller"],
  imageIncludes: ["sig-storage/snapshot-controller"],
};
const CSI_SIDECAR = "CSI sidecars run inside the storage driver's controller (a Deployment or StatefulSet)";

/** Kubernetes' built-in finalizers and the storage ones. */
export const KUBERNETES_FINALIZERS: readonly FinalizerInfo[] = [
  // Kubernetes storage: built-in protections and the CSI sidecars / snapshot controller
  {
    pattern: "kubernetes.io/pvc-protection",
    controller: "kube-controller-manager (pvc-protection)",
    purpose: "keeps a PersistentVolumeClaim while a Pod still uses it",
    cleanup: "nothing in AWS; deleting the Pods that mount the claim releases it",
    builtin: true,
  },
  {
    pattern: "kubernetes.io/pv-protection",
    controller: "kube-controller-manager (pv-protection)",
    purpose: "keeps a PersistentVolume while a claim is bound to it",
    cleanup: "the EBS/EFS volume behind it if the reclaim policy is Delete and the provisioner never runs",
    builtin: true,
  },
  {
    pattern: "external-provisioner.volume.kubernetes.io/finalizer",
    controller: "CSI external-provisioner",
    purpose: "deletes the backing volume before the PersistentVolume goes",
    cleanup: "the EBS/EFS volume",
    matcher: { imageIncludes: ["sig-storage/csi-provisioner"] },
    notOnlyDeployment: CSI_SIDECAR,
  },
  {
    pattern: "provisioner.storage.kubernetes.io/",
    prefix: true,
    controller: "CSI external-provisioner",
    purpose: "keeps a PVC or VolumeSnapshot while a new volume is being cloned or restored from it",
    cleanup: "a half-provisioned volume in the storage backend",
    matcher: { imageIncludes: ["sig-storage/csi-provisioner"] },
    notOnlyDeployment: CSI_SIDECAR,
  },
  {
    pattern: "external-attacher/",
    prefix: true,
    controller: "CSI external-attacher",
    purpose: "detaches the volume from its node (ControllerUnpublish) before the VolumeAttachment or PV goes",
    cleanup: "a volume still attached to an instance (an EBS volume stays in-use)",
    matcher: { imageIncludes: ["sig-storage/csi-attacher"] },
    notOnlyDeployment: CSI_SIDECAR,
  },
  {
    pattern: "snapshot.storage.kubernetes.io/",
    prefix: true,
    controller: "CSI snapshot-controller",
    purpose:
      "protects a VolumeSnapshot/VolumeSnapshotContent while it is bound or a restore source, and a PVC while it is being snapshotted",
    cleanup: "the snapshot in the storage backend (e.g. an EBS snapshot)",
    matcher: SNAPSHOT_CONTROLLER,
  },

  // Kubernetes itself
  {
    pattern: "foregroundDeletion",
    controller: "kube-controller-manager (garbage collector)",
    purpose: "foreground deletion: waits until every dependent (ownerReferences) is gone",
    cleanup: "dependents that still exist become orphans",
    builtin: true,
  },
  {
    pattern: "orphan",
    controller: "kube-controller-manager (garbage collector)",
    purpose: "orphan deletion: strips ownerReferences from dependents first",
    cleanup: "dependents keep a dangling ownerReference",
    builtin: true,
  },
  {
    pattern: "batch.kubernetes.io/job-tracking",
    controller: "kube-controller-manager (job controller)",
    purpose: "counts a Job's finished Pods before they go",
    cleanup: "the Job's status may miss this Pod",
    builtin: true,
  },
  {
    pattern: "kubernetes",
    controller: "kube-controller-manager (namespace controller)",
    purpose: "deletes all content of a namespace before the namespace goes",
    cleanup: "content that still exists is left without a namespace",
    builtin: true,
  },
  {
    pattern: "customresourcecleanup.apiextensions.k8s.io",
    controller: "kube-apiserver (apiextensions CRD finalizer)",
    purpose: "deletes every custom resource of a CRD before the CRD goes",
    cleanup: "custom resources that still exist (and their own finalizers) are lost with the CRD",
    builtin: true,
  },
];
