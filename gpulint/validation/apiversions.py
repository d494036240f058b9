"""Built-in API versions that Kubernetes has removed, or deprecated with a removal release.

From the Kubernetes deprecated API migration guide
(https://kubernetes.io/docs/reference/using-api/deprecation-guide/): an object written in a
removed version is refused by every server from that release on ("no matches for kind ... in
version ..."); a deprecated one is still served, with a warning, until the release named.
A plain table, so the check needs neither the schema extra nor any parsing at start-up.
"""

from __future__ import annotations

import functools

from gpulint.views import NamedTuple

#: A Kubernetes minor release, as (1, 35).
Release = tuple[int, int]


class Lifecycle(NamedTuple):
    """When a built-in API version of a kind stops being served, and what replaces it."""

    removed: Release
    replacement: str | None  # the apiVersion to write instead; None: the API is gone
    deprecated: Release | None = None
    note: str = ""  # what to do when there is no replacement


@functools.cache
def _table() -> dict[tuple[str, str], Lifecycle]:
    # (apiVersion, kind) -> Lifecycle; built on first use: most runs never ask.
    table: dict[tuple[str, str], Lifecycle] = {}

    def gone(
        versions: tuple[str, ...],
        kinds: tuple[str, ...],
        removed: Release,
        replacement: str | None,
        deprecated: Release | None = None,
        note: str = "",
    ) -> None:
        for version in versions:
            for kind in kinds:
                table[(version, kind)] = Lifecycle(removed, replacement, deprecated, note)

    # 1.16
    workloads = ("Deployment", "ReplicaSet")
    gone(("extensions/v1beta1", "apps/v1beta1", "apps/v1beta2"), workloads, (1, 16), "apps/v1")
    gone(("extensions/v1beta1", "apps/v1beta2"), ("DaemonSet",), (1, 16), "apps/v1")
    gone(("apps/v1beta1", "apps/v1beta2"), ("StatefulSet",), (1, 16), "apps/v1")
    gone(("extensions/v1beta1",), ("NetworkPolicy",), (1, 16), "networking.k8s.io/v1")
    gone(("extensions/v1beta1",), ("PodSecurityPolicy",), (1, 16), "policy/v1beta1")
    # 1.22
    webhooks = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
    gone(
        ("admissionregistration.k8s.io/v1beta1",),
        webhooks,
        (1, 22),
        "admissionregistration.k8s.io/v1",
        (1, 16),
    )
    gone(
        ("apiextensions.k8s.io/v1beta1",),
        ("CustomResourceDefinition",),
        (1, 22),
        "apiextensions.k8s.io/v1",
        (1, 16),
    )
    gone(
        ("apiregistration.k8s.io/v1beta1",),
        ("APIService",),
        (1, 22),
        "apiregistration.k8s.io/v1",
        (1, 19),
    )
    gone(
        ("authentication.k8s.io/v1beta1",),
        ("TokenReview",),
        (1, 22),
        "authentication.k8s.io/v1",
        (1, 19),
    )
    reviews = ("LocalSubjectAccessReview", "SelfSubjectAccessReview", "SubjectAccessReview")
    gone(("authorization.k8s.io/v1beta1",), reviews, (1, 22), "authorization.k8s.io/v1", (1, 19))
    gone(
        ("certificates.k8s.io/v1beta1",),
        ("CertificateSigningRequest",),
        (1, 22),
        "certificates.k8s.io/v1",
        (1, 19),
    )
    gone(("coordination.k8s.io/v1beta1",), ("Lease",), (1, 22), "coordination.k8s.io/v1", (1, 19))
    gone(
        ("extensions/v1beta1", "networking.k8s.io/v1beta1"),
        ("Ingress",),
        (1, 22),
        "networking.k8s.io/v1",
        (1, 19),
    )
    gone(
        ("networking.k8s.io/v1beta1",), ("IngressClass",), (1, 22), "networking.k8s.io/v1", (1, 19)
    )
    rbac = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    gone(
        ("rbac.authorization.k8s.io/v1beta1",),
        rbac,
        (1, 22),
        "rbac.authorization.k8s.io/v1",
        (1, 17),
    )
    gone(
        ("scheduling.k8s.io/v1beta1",), ("PriorityClass",), (1, 22), "scheduling.k8s.io/v1", (1, 14)
    )
    storage = ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment")
    gone(("storage.k8s.io/v1beta1",), storage, (1, 22), "storage.k8s.io/v1", (1, 19))
    # 1.25
    gone(("batch/v1beta1",), ("CronJob",), (1, 25), "batch/v1", (1, 21))
    gone(("discovery.k8s.io/v1beta1",), ("EndpointSlice",), (1, 25), "discovery.k8s.io/v1", (1, 21))
    gone(("events.k8s.io/v1beta1",), ("Event",), (1, 25), "events.k8s.io/v1", (1, 19))
    gone(("autoscaling/v2beta1",), ("HorizontalPodAutoscaler",), (1, 25), "autoscaling/v2", (1, 22))
    gone(("policy/v1beta1",), ("PodDisruptionBudget",), (1, 25), "policy/v1", (1, 21))
    gone(("node.k8s.io/v1beta1",), ("RuntimeClass",), (1, 25), "node.k8s.io/v1", (1, 20))
    gone(
        ("policy/v1beta1",),
        ("PodSecurityPolicy",),
        (1, 25),
        None,
        (1, 21),
        "PodSecurityPolicy has no replacement API: use Pod Security Admission (namespace labels)",
    )
    # 1.26, 1.27, 1.29, 1.32
    flow = ("FlowSchema", "PriorityLevelConfiguration")
    gone(
        ("flowcontrol.apiserver.k8s.io/v1beta1",),
        flow,
        (1, 26),
        "flowcontrol.apiserver.k8s.io/v1",
        (1, 23),
    )
    gone(("autoscaling/v2beta2",), ("HorizontalPodAutoscaler",), (1, 26), "autoscaling/v2", (1, 23))
    gone(
        ("storage.k8s.io/v1beta1",), ("CSIStorageCapacity",), (1, 27), "storage.k8s.io/v1", (1, 24)
    )
    gone(
        ("flowcontrol.apiserver.k8s.io/v1beta2",),
        flow,
        (1, 29),
        "flowcontrol.apiserver.k8s.io/v1",
        (1, 26),
    )
    gone(
        ("flowcontrol.apiserver.k8s.io/v1beta3",),
        flow,
        (1, 32),
        "flowcontrol.apiserver.k8s.io/v1",
        (1, 29),
    )
    return table


def lifecycle(api_version: str, kind: str) -> Lifecycle | None:
    """The removal of `kind` in `api_version`, when the guide lists one."""
    return _table().get((api_version, kind))


def release(text: str) -> Release | None:
    """`v1.35.2`, `1.35`, `1.35+` or `v1.35.0-eks-1234` -> (1, 35); None when it is none."""
    digits = text.strip().lstrip("vV")
    major, _, rest = digits.partition(".")
    minor = ""
    for char in rest:
        if not char.isdigit():
            break
        minor += char
    if not major.isdigit() or not minor:
        return None
    return int(major), int(minor)


def shown(version: Release) -> str:
    """(1, 35) -> `1.35`."""
    return f"{version[0]}.{version[1]}"
