"""Image pulls that dominate the start-up of a GPU pool, and the pool's known speed-ups.

A GPU pod is *pull-dominated* when its image pulls, as it waited for them (the kubelet's
`<total> including waiting`, else the pull time), take at least PULL_SHARE of the time from its
creation to its first container start and at least PULL_SECONDS: the GPU is bound and idle while
the image comes down. A pool with such pods is reported with what speeds its pulls up, or that
nothing does, as the dump shows it:

- GKE image streaming: the node label `cloud.google.com/gke-image-streaming: "true"`;
- a peer-to-peer image cache: a DaemonSet of Spegel, Dragonfly (`dfdaemon`, `dragonflyoss/`
  images), Uber's Kraken agent, or kube-fledged (its DaemonSet, or an `ImageCache`);
- a pre-pull: a DaemonSet whose containers or init containers use the pulled image, or a
  kube-fledged `ImageCache` that lists it.

A DaemonSet counts for a pool when its `nodeSelector` matches a node of the pool (affinity and
tolerations are not read: "may run there"). Without DaemonSets in the objects (the default
`kubectl get pods,events,nodes,jobs` has none) caches and pre-pulls are "not known".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.diagnose.extra import percentile
from gpulint.diagnose.timeline import PodTimeline
from gpulint.profile.values import mapping, sequence, text

#: A pod is pull-dominated when its pulls take this share of created -> first start ...
PULL_SHARE = 0.5
#: ... and at least this many seconds (a 20 s pull of a 30 s start-up costs little).
PULL_SECONDS = 60.0
#: The node label GKE sets on nodes with image streaming (see its how-to/image-streaming).
STREAMING_LABEL = "cloud.google.com/gke-image-streaming"
#: Peer-to-peer image caches: (product, words of a DaemonSet's name or image that name it).
P2P_CACHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Spegel", ("spegel",)),
    ("Dragonfly", ("dragonfly", "dfdaemon")),
    ("Kraken", ("kraken-agent", "uber/kraken")),
    ("kube-fledged", ("kubefledged", "kube-fledged")),
)


@dataclass(frozen=True)
class PoolPulls:
    """A GPU pool whose start-up is dominated by image pulls."""

    pool: str
    started: int  # GPU pods of the pool that started (with a known creation time)
    dominated: tuple[PodTimeline, ...]  # those whose pulls dominate their start-up
    pull_p95: float  # seconds, waiting included, over the dominated pods
    waiting_p95: float | None  # seconds queued behind other pulls (None: not known)
    share_p95: float  # of created -> first start
    images: tuple[tuple[str, int | None], ...]  # (image, size in bytes) pulled by them
    streaming: tuple[int, int]  # (nodes labelled for image streaming, nodes of the pool)
    caches: tuple[str, ...]  # `Spegel (DaemonSet kube-system/spegel)`, pre-pulls
    daemonsets_known: bool  # the objects list DaemonSets


def pull_seconds(pod: PodTimeline) -> float | None:
    """The pod's pulls as it waited for them (cache hits count zero); None when not known."""
    return pod.phases["pull"]


def start_seconds(pod: PodTimeline) -> float | None:
    """Created to first container start."""
    if pod.created is None or pod.started is None:
        return None
    return max(0.0, (pod.started - pod.created).total_seconds())


def pull_share(pod: PodTimeline) -> float | None:
    """The share of created -> first start spent pulling; None when either is not known."""
    pulled, start = pull_seconds(pod), start_seconds(pod)
    if pulled is None or not start:
        return None
    return min(1.0, pulled / start)


def dominated(pod: PodTimeline) -> bool:
    """Whether the pod's pulls dominate its start-up (see the module docstring)."""
    share, pulled = pull_share(pod), pull_seconds(pod)
    return (
        share is not None and pulled is not None and share >= PULL_SHARE and pulled >= PULL_SECONDS
    )


def pull_findings(
    pods: Sequence[PodTimeline],
    nodes: Sequence[Mapping[str, Any]],
    pools: Mapping[str, str],
    helpers: Sequence[Mapping[str, Any]],
    kinds: Iterable[str],
) -> tuple[PoolPulls, ...]:
    """The pools whose GPU pods' start-up is dominated by pulls, by pool name.

    `pools` maps node names to pools; `helpers` are the DaemonSets and kube-fledged
    ImageCaches of the objects; `kinds` the kinds the objects hold."""
    daemonsets_known = "DaemonSet" in set(kinds)
    by_pool: dict[str, list[PodTimeline]] = {}
    for pod in pods:
        if pod.gpus and start_seconds(pod) is not None:
            by_pool.setdefault(pod.pool or "unknown", []).append(pod)
    labels_of: dict[str, list[Mapping[str, Any]]] = {}
    for node in nodes:
        metadata = mapping(node.get("metadata"))
        pool = pools.get(text(metadata.get("name")))
        if pool is not None:
            labels_of.setdefault(pool, []).append(mapping(metadata.get("labels")))
    found = []
    for pool, members in sorted(by_pool.items()):
        slow = tuple(p for p in members if dominated(p))
        if not slow:
            continue
        node_labels = labels_of.get(pool, [])
        streaming = sum(
            text(labels.get(STREAMING_LABEL)).lower() == "true" for labels in node_labels
        )
        images: dict[str, int | None] = {}
        for pod in slow:
            for pull in pod.pulls:
                if not pull.cache_hit:
                    known = images.get(pull.image)
                    images[pull.image] = pull.size_bytes if known is None else known
        waits = [p.phases["pullWait"] for p in slow]
        found.append(
            PoolPulls(
                pool=pool,
                started=len(members),
                dominated=slow,
                pull_p95=percentile([pull_seconds(p) or 0.0 for p in slow], 0.95) or 0.0,  # type: ignore[list-item]
                waiting_p95=(
                    None if None in waits else percentile(waits, 0.95)  # type: ignore[arg-type]
                ),
                share_p95=percentile([pull_share(p) or 0.0 for p in slow], 0.95) or 0.0,  # type: ignore[list-item]
                images=tuple(sorted(images.items())),
                streaming=(streaming, len(node_labels)),
                caches=_caches(helpers, node_labels, set(images)),
                daemonsets_known=daemonsets_known,
            )
        )
    return tuple(found)


def _caches(
    helpers: Sequence[Mapping[str, Any]],
    node_labels: Sequence[Mapping[str, Any]],
    images: set[str],
) -> tuple[str, ...]:
    """The image caches and pre-pulls that may serve a node of the pool."""
    found: list[str] = []
    for obj in helpers:
        metadata = mapping(obj.get("metadata"))
        ref = f"{text(metadata.get('namespace')) or 'default'}/{text(metadata.get('name'))}"
        if obj.get("kind") == "ImageCache":
            for entry in sequence(mapping(obj.get("spec")).get("cacheSpec")):
                entry = mapping(entry)
                listed = {text(i) for i in sequence(entry.get("images"))} & images
                if listed and _selects(mapping(entry.get("nodeSelector")), node_labels):
                    found.append(
                        f"kube-fledged ImageCache {ref} pre-pulls {', '.join(sorted(listed))}"
                    )
            continue
        spec = mapping(mapping(mapping(obj.get("spec")).get("template")).get("spec"))
        if not _selects(mapping(spec.get("nodeSelector")), node_labels):
            continue
        containers = [
            mapping(c) for key in ("initContainers", "containers") for c in sequence(spec.get(key))
        ]
        used = {text(c.get("image")) for c in containers}
        words = " ".join([text(metadata.get("name")), *used]).lower()
        product = next((name for name, marks in P2P_CACHES if any(m in words for m in marks)), None)
        if product is not None:
            found.append(f"{product} (DaemonSet {ref})")
        elif used & images:
            found.append(f"pre-pull DaemonSet {ref} ({', '.join(sorted(used & images))})")
    return tuple(found)


def _selects(selector: Mapping[str, Any], node_labels: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a node selector matches a node of the pool (any node, when it selects none)."""
    if not selector:
        return True
    return any(
        all(text(labels.get(k)) == text(v) and k in labels for k, v in selector.items())
        for labels in node_labels
    )


def speed_ups(finding: PoolPulls) -> tuple[str, ...]:
    """What the dump shows of the pool's speed-ups, or of their absence, in words."""
    labelled, nodes = finding.streaming
    said = [
        f"image streaming on {labelled} of {nodes} node{'' if nodes == 1 else 's'}"
        if labelled
        else f"no node labelled {STREAMING_LABEL}=true (GKE image streaming)"
    ]
    if finding.caches:
        said.extend(finding.caches)
    elif finding.daemonsets_known:
        said.append(
            "no pre-pull DaemonSet or peer-to-peer image cache (Spegel, Dragonfly, Kraken, "
            "kube-fledged) on its nodes"
        )
    else:
        said.append(
            "pre-pull and peer-to-peer image caches not known (no DaemonSets among the objects "
            "read; --live does not list them, a dump can: kubectl get ...,daemonsets)"
        )
    return tuple(said)


def pull_fix(finding: PoolPulls) -> str:
    """What to do about the pool's pulls, given the speed-ups it has."""
    steps = []
    if finding.waiting_p95 and finding.waiting_p95 >= 0.25 * finding.pull_p95:
        steps.append(
            "let the kubelet pull in parallel (serializeImagePulls: false, maxParallelImagePulls)"
        )
    if not finding.streaming[0]:
        steps.append("stream images lazily (GKE image streaming, SOCI, AKS artifact streaming)")
    if not finding.caches:
        steps.append(
            "pre-pull the image on the pool's nodes (a DaemonSet, a node image) or run a "
            "peer-to-peer cache (Spegel, Dragonfly)"
        )
    if not steps:
        steps.append("slim the image (a smaller, layered build) or keep a warm node")
    return "; ".join(steps)
