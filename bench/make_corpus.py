"""Write a deterministic corpus of realistic Kubernetes manifests, and cluster profiles for it.

The corpus has `--files N` files of `--docs-per-file M` objects each: a third rendered by Helm
(every document after a `# Source:` comment), a few JSON `kind: List` exports as
`kubectl get -o json` writes them, the rest plain multi-document YAML. Objects are
Deployments, StatefulSets, Jobs, CronJobs, DaemonSets, CustomResourceDefinitions, Services,
ConfigMaps, ServiceAccounts and HPAs; workloads look like what charts render (labels,
annotations, probes, env lists, init containers, tolerations, affinity and GPU resources).

A known set of mistakes is planted in GPU containers (GPU001-GPU004, GPU601), some of them
suppressed with `# gpulint: ignore[...]`; `.planted.json` (a hidden file, so gpulint skips it)
lists every planted finding as path, line and code, so a test can check that lint() finds
exactly those.

`--profile-nodes N --profile-pools P` also writes `profile-N.yaml` (or `.json` with
`--profile-format json`) next to the corpus: a `kubectl get nodes -o yaml` dump of N EKS nodes
in P node groups that the corpus's GPU pods can land on.

Usage: python bench/make_corpus.py [--files N] [--docs-per-file M] [--out DIR] [--seed S]
                                   [--profile-nodes N --profile-pools P]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_FILES = 2000
DEFAULT_DOCS_PER_FILE = 5
DEFAULT_OUT = Path(__file__).resolve().parent / "corpus"
DEFAULT_SEED = 9200
DEFAULT_MISTAKE_RATE = 0.25
MANIFEST = ".planted.json"
#: Bumped whenever the generated text changes, so stale corpora are regenerated.
GENERATOR_VERSION = 2

_PLAIN_SAFE = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*\Z")
_NOT_PLAIN_WORDS = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
)  # words YAML 1.1 would read as booleans or null


class Key(str):
    """A mapping key that carries a planted finding (or a suppressed one) for the emitter."""

    code: str
    suppressed: bool

    def __new__(cls, text: str, code: str, suppressed: bool = False) -> Key:
        key = super().__new__(cls, text)
        key.code = code
        key.suppressed = suppressed
        return key


@dataclass(frozen=True)
class Literal:
    """A block scalar written with `|`."""

    text: str


@dataclass(frozen=True)
class Flow:
    """A small mapping written in flow style, `{app: web, tier: api}`."""

    items: dict[str, str]


@dataclass
class Planted:
    """Every planted finding: reported ones and suppressed ones, as (path, line, code)."""

    reported: list[tuple[str, int, str]] = field(default_factory=list)
    suppressed: list[tuple[str, int, str]] = field(default_factory=list)


def scalar(value: Any) -> str:
    """A scalar as YAML text that reads back as the same type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _PLAIN_SAFE.match(text) and text.lower() not in _NOT_PLAIN_WORDS:
        return text
    return json.dumps(text)


class Emitter:
    """Block-style YAML writer that records the line of every planted key."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.planted: list[tuple[int, str, bool]] = []  # (line, code, suppressed)

    def comment(self, text: str) -> None:
        """A whole-line comment or a `---` separator."""
        self.lines.append(text)

    def document(self, value: dict[str, Any]) -> None:
        """One document starting at column 1."""
        self._mapping(value, 0)

    def _line(self, text: str, key: Any = None) -> None:
        if isinstance(key, Key):
            self.planted.append((len(self.lines) + 1, key.code, key.suppressed))
            if key.suppressed:
                text += f"  # gpulint: ignore[{key.code}]"
        self.lines.append(text)

    def _mapping(self, value: dict[str, Any], indent: int, first_prefix: str | None = None) -> None:
        pad = " " * indent
        for i, (key, item) in enumerate(value.items()):
            lead = first_prefix if (i == 0 and first_prefix is not None) else pad
            self._entry(f"{lead}{scalar(key)}:", key, item, indent)

    def _entry(self, head: str, key: Any, item: Any, indent: int) -> None:
        if isinstance(item, Literal):
            self._line(f"{head} |", key)
            body = " " * (indent + 2)
            self.lines.extend(f"{body}{line}" if line else "" for line in item.text.split("\n"))
        elif isinstance(item, Flow):
            pairs = ", ".join(f"{scalar(k)}: {scalar(v)}" for k, v in item.items.items())
            self._line(f"{head} {{{pairs}}}", key)
        elif isinstance(item, dict):
            if not item:
                self._line(f"{head} {{}}", key)
                return
            self._line(head, key)
            self._mapping(item, indent + 2)
        elif isinstance(item, list):
            if not item:
                self._line(f"{head} []", key)
                return
            self._line(head, key)
            self._sequence(item, indent + 2)
        else:
            self._line(f"{head} {scalar(item)}", key)

    def _sequence(self, items: list[Any], indent: int) -> None:
        pad = " " * indent
        for item in items:
            if isinstance(item, dict) and item:
                self._mapping(item, indent + 2, first_prefix=f"{pad}- ")
            else:
                self.lines.append(f"{pad}- {scalar(item)}")


def to_json(value: Any) -> Any:
    """The plain JSON form of a generated object (flow maps and block scalars unwrapped)."""
    if isinstance(value, Literal):
        return value.text
    if isinstance(value, Flow):
        return dict(value.items)
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


_TEAMS = ("ml-platform", "research", "inference", "data", "vision", "speech", "recsys", "search")
_WORDS = (
    "trainer", "serving", "embed", "ranker", "indexer", "tokenizer", "feature", "eval",
    "notebook", "batch", "stream", "vector", "llm", "asr", "ocr", "etl", "gateway", "cache",
)  # fmt: skip
_IMAGES = (
    "nvcr.io/nvidia/pytorch:24.05-py3",
    "nvcr.io/nvidia/tritonserver:24.05-py3",
    "ghcr.io/example/trainer:1.14.2",
    "registry.example.com/ml/serving:2.3.0",
    "python:3.11-slim",
    "busybox:1.36",
)
_GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/gpu", "amd.com/gpu")


@dataclass(frozen=True)
class Vendor:
    """Where a GPU pod of one vendor asks to run: an instance type and a product label."""

    instance_type: str
    product_label: str
    products: tuple[str, ...]


_VENDORS = {
    "nvidia.com/gpu": Vendor(
        "p4d.24xlarge",
        "nvidia.com/gpu.product",
        ("NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"),
    ),
    "amd.com/gpu": Vendor(
        "Standard_ND96isr_MI300X_v5", "amd.com/gpu.product", ("AMD-Instinct-MI300X",)
    ),
}
_CRD_FIELDS = (
    "replicas", "image", "modelName", "modelRevision", "storageUri", "maxBatchSize",
    "minReplicas", "maxReplicas", "runtime", "protocol", "timeoutSeconds", "canaryPercent",
)  # fmt: skip
_ENV_NAMES = (
    "LOG_LEVEL", "WORKERS", "MODEL_NAME", "MODEL_REVISION", "CACHE_DIR", "HF_HOME", "NCCL_DEBUG",
    "OMP_NUM_THREADS", "BATCH_SIZE", "MAX_SEQ_LEN", "METRICS_PORT", "TRACING_ENDPOINT",
    "FEATURE_FLAGS", "S3_BUCKET", "REGION", "TIMEOUT_SECONDS",
)  # fmt: skip


class Generator:
    """Builds objects and files from one seeded random source."""

    def __init__(self, seed: int, mistake_rate: float = 0.25) -> None:
        self.rng = random.Random(seed)
        self.mistake_rate = mistake_rate  # the share of GPU pods that get a planted mistake
        self.serial = 0
        # Mistakes to plant, cycled so every kind appears at a steady rate.
        self.mistakes = ["GPU002", "GPU003", "GPU002-limit", "GPU001", "GPU004", "GPU601"]
        self.plant = True

    def name(self) -> str:
        """A unique object name."""
        self.serial += 1
        return f"{self.rng.choice(_WORDS)}-{self.rng.choice(_WORDS)}-{self.serial}"

    def labels(self, app: str, release: str | None) -> dict[str, str]:
        """The standard labels Helm charts put on everything."""
        labels = {"app.kubernetes.io/name": app, "app.kubernetes.io/instance": release or app}
        if release:
            labels["app.kubernetes.io/managed-by"] = "Helm"
            labels["helm.sh/chart"] = f"{app}-0.{self.rng.randint(1, 30)}.{self.rng.randint(0, 9)}"
        labels["app.kubernetes.io/version"] = (
            f"1.{self.rng.randint(0, 20)}.{self.rng.randint(0, 9)}"
        )
        return labels

    def metadata(self, name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
        """metadata with labels and, sometimes, annotations."""
        meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
        if self.rng.random() < 0.4:
            meta["annotations"] = {
                "meta.helm.sh/release-name": labels["app.kubernetes.io/instance"],
                "example.com/owner": f"team-{namespace}",
            }
        return meta

    def env(self) -> list[dict[str, Any]]:
        """An env list: plain values, secret references and downward API fields."""
        items: list[dict[str, Any]] = []
        for env_name in self.rng.sample(_ENV_NAMES, self.rng.randint(1, 4)):
            roll = self.rng.random()
            if roll < 0.7:
                value: Any = self.rng.choice(
                    ("info", "4", "true", "/cache", "0.1", "us-east-1", "30", "")
                )
                items.append({"name": env_name, "value": value})
            elif roll < 0.85:
                ref = {"name": f"{env_name.lower().replace('_', '-')}-secret", "key": "value"}
                items.append({"name": env_name, "valueFrom": {"secretKeyRef": ref}})
            else:
                items.append(
                    {"name": env_name, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
                )
        return items

    def probe(self, port: int) -> dict[str, Any]:
        """An HTTP liveness/readiness probe."""
        return {
            "httpGet": {"path": "/healthz", "port": port},
            "initialDelaySeconds": self.rng.choice((5, 10, 30)),
            "periodSeconds": 10,
            "timeoutSeconds": 3,
            "failureThreshold": 3,
        }

    def resources(self, gpu: str | None, count: int, mistake: str | None) -> dict[str, Any]:
        """A resources block; `mistake` plants one finding in it."""
        cpu, memory = str(self.rng.choice((1, 2, 4, 8))), self.rng.choice(("4Gi", "16Gi", "64Gi"))
        requests: dict[Any, Any] = {"cpu": cpu, "memory": memory}
        limits: dict[Any, Any] = {"memory": memory}
        if gpu is None:
            return {"requests": requests, "limits": limits}
        suppressed = self.rng.random() < 0.2
        if mistake == "GPU002":  # request differs from the limit
            requests[Key(gpu, "GPU002", suppressed)] = count
            limits[gpu] = count + 1
        elif mistake == "GPU002-limit":  # request without a limit
            requests[Key(gpu, "GPU002", suppressed)] = count
        elif mistake == "GPU003":  # fractional limit (the request defaults to it)
            limits[Key(gpu, "GPU003", suppressed)] = self.rng.choice(("0.5", "500m", 1.5))
        elif mistake == "GPU001":  # a misspelled resource name
            limits[Key(self.rng.choice(("nvidia.com/gpus", "nvidia/gpu")), "GPU001")] = count
        elif mistake == "GPU601":  # GPUs only: BestEffort QoS
            return {"limits": {gpu: count}}
        else:
            if self.rng.random() < 0.5:
                requests[gpu] = count
            limits[gpu] = count
        return {"requests": requests, "limits": limits}

    def container(
        self, name: str, gpu: str | None, mistake: str | None, port: int
    ) -> dict[str, Any]:
        """An application container."""
        container: dict[Any, Any] = {
            "name": name,
            "image": self.rng.choice(_IMAGES),
            "imagePullPolicy": "IfNotPresent",
        }
        if self.rng.random() < 0.3:
            container["command"] = ["python", "-m", self.rng.choice(_WORDS)]
            container["args"] = [f"--port={port}", "--log-format=json"]
        container["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
        container["env"] = self.env()
        resources = self.resources(gpu, self.rng.choice((1, 1, 2, 4, 8)), mistake)
        if mistake == "GPU004":
            container[Key("resource", "GPU004")] = resources
        else:
            container[Key("resources", "GPU601") if mistake == "GPU601" else "resources"] = (
                resources
            )
        container["volumeMounts"] = [
            {"name": "cache", "mountPath": "/cache"},
            {"name": "config", "mountPath": "/etc/app", "readOnly": True},
        ]
        roll = self.rng.random()
        if roll < 0.3:
            container["livenessProbe"] = self.probe(port)
        elif roll < 0.6:
            container["readinessProbe"] = self.probe(port)
        if self.rng.random() < 0.5:
            container["securityContext"] = {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
            }
        return container

    def sidecar(self, app: str, with_resources: bool) -> dict[str, Any]:
        """A metrics exporter next to the application container."""
        sidecar: dict[str, Any] = {
            "name": f"{app}-exporter",
            "image": "quay.io/prometheus/statsd-exporter:v0.26.1",
            "ports": [{"name": "metrics", "containerPort": 9102}],
        }
        if with_resources:
            sidecar["resources"] = {"limits": {"cpu": "100m", "memory": "128Mi"}}
        return sidecar

    def init_container(self, with_resources: bool) -> dict[str, Any]:
        """An init container that waits for a dependency, or a restartable sidecar."""
        container: dict[str, Any] = {
            "name": self.rng.choice(("wait-for-db", "fetch-model", "migrate")),
            "image": "busybox:1.36",
            "command": ["sh", "-c", "until nc -z db 5432; do sleep 2; done"],
        }
        if self.rng.random() < 0.2:
            container["name"] = "log-shipper"
            container["restartPolicy"] = "Always"
        if with_resources:
            container["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
        return container

    def pod_spec(self, app: str, kind: str) -> dict[str, Any]:
        """A pod spec; GPU pods get tolerations, affinity and, at a steady rate, a mistake."""
        gpu = self.rng.choice(_GPU_RESOURCES) if self.rng.random() < 0.6 else None
        mistake = None
        if gpu is not None and self.rng.random() < self.mistake_rate and self.plant:
            mistake = self.mistakes[self.serial % len(self.mistakes)]
        port = self.rng.choice((8000, 8080, 8443, 9090))
        spec: dict[str, Any] = {}
        if self.rng.random() < 0.8:
            spec["serviceAccountName"] = app
        if kind in ("Job", "CronJob"):
            spec["restartPolicy"] = "OnFailure"
        besteffort = mistake == "GPU601"
        if self.rng.random() < 0.3:
            spec["initContainers"] = [self.init_container(not besteffort)]
        containers = [self.container(app, gpu, mistake, port)]
        if self.rng.random() < 0.15:
            containers.append(self.sidecar(app, with_resources=not besteffort))
        spec["containers"] = containers
        if gpu is not None:
            vendor = _VENDORS[gpu]
            spec["nodeSelector"] = Flow({"node.kubernetes.io/instance-type": vendor.instance_type})
            spec["tolerations"] = [
                {"key": gpu, "operator": "Exists", "effect": "NoSchedule"},
                {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
            ]
            if self.rng.random() < 0.6:
                spec["affinity"] = {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": vendor.product_label,
                                            "operator": "In",
                                            "values": list(vendor.products),
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                }
        elif self.rng.random() < 0.3:
            spec["affinity"] = {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app}},
                            },
                        }
                    ]
                }
            }
        if self.rng.random() < 0.5:
            spec["volumes"] = [
                {"name": "cache", "emptyDir": {"sizeLimit": "20Gi"}},
                {"name": "config", "configMap": {"name": f"{app}-config"}},
            ]
        else:
            del containers[0]["volumeMounts"]
        return spec

    def template(self, app: str, labels: dict[str, str], kind: str) -> dict[str, Any]:
        """A pod template with selector labels and a config checksum annotation."""
        checksum = f"{self.rng.getrandbits(128):032x}"
        return {
            "metadata": {
                "labels": Flow({"app.kubernetes.io/name": app, **dict(list(labels.items())[1:2])}),
                "annotations": {"checksum/config": checksum},
            },
            "spec": self.pod_spec(app, kind),
        }

    def workload(self, kind: str, app: str, ns: str, release: str | None) -> dict[str, Any]:
        """A Deployment, StatefulSet, DaemonSet, Job or CronJob."""
        labels = self.labels(app, release)
        group = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
        obj: dict[str, Any] = {
            "apiVersion": group,
            "kind": kind,
            "metadata": self.metadata(self.name(), ns, labels),
        }
        template = self.template(app, labels, kind)
        selector = {"matchLabels": {"app.kubernetes.io/name": app}}
        if kind == "Deployment":
            obj["spec"] = {
                "replicas": self.rng.choice((1, 2, 3, 4)),
                "revisionHistoryLimit": 5,
                "selector": selector,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}},
                "template": template,
            }
        elif kind == "StatefulSet":
            obj["spec"] = {
                "replicas": self.rng.choice((1, 3)),
                "serviceName": app,
                "selector": selector,
                "template": template,
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "100Gi"}},
                        },
                    }
                ],
            }
        elif kind == "DaemonSet":
            obj["spec"] = {"selector": selector, "template": template}
        elif kind == "Job":
            obj["spec"] = {
                "backoffLimit": 2,
                "parallelism": self.rng.choice((1, 2, 4)),
                "ttlSecondsAfterFinished": 3600,
                "template": template,
            }
        else:
            obj["spec"] = {
                "schedule": self.rng.choice(("0 * * * *", "*/15 * * * *", "30 2 * * 1")),
                "concurrencyPolicy": "Forbid",
                "jobTemplate": {"spec": {"backoffLimit": 1, "template": template}},
            }
        return obj

    def service(self, app: str, ns: str, release: str | None) -> dict[str, Any]:
        """A ClusterIP service."""
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.metadata(f"{app}-{self.serial}", ns, self.labels(app, release)),
            "spec": {
                "type": "ClusterIP",
                "selector": {"app.kubernetes.io/name": app},
                "ports": [
                    {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
                    {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"},
                ],
            },
        }

    def config_map(self, app: str, ns: str, release: str | None) -> dict[str, Any]:
        """A ConfigMap with a long configuration file and a few short keys."""
        lines = []
        for section in self.rng.sample(_WORDS, self.rng.randint(4, 10)):
            lines.append(f"[{section}]")
            for option in range(self.rng.randint(3, 8)):
                lines.append(f"{section}_option_{option} = {self.rng.randint(0, 10_000)}")
            lines.append("")
        self.serial += 1
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": self.metadata(f"{app}-config-{self.serial}", ns, self.labels(app, release)),
            "data": {
                "app.ini": Literal("\n".join(lines)),
                "LOG_LEVEL": "info",
                "WORKERS": "4",
            },
        }

    def small_object(self, app: str, ns: str, release: str | None) -> dict[str, Any]:
        """A ServiceAccount or a HorizontalPodAutoscaler."""
        self.serial += 1
        if self.rng.random() < 0.5:
            return {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": self.metadata(app, ns, self.labels(app, release)),
            }
        return {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": self.metadata(f"{app}-{self.serial}", ns, self.labels(app, release)),
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": app},
                "minReplicas": 1,
                "maxReplicas": self.rng.choice((4, 8, 16)),
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 70},
                        },
                    }
                ],
            },
        }

    def crd(self, app: str) -> dict[str, Any]:
        """A CustomResourceDefinition with an OpenAPI schema, as operator charts ship them."""
        self.serial += 1
        plural = f"{app}s{self.serial}"
        group = f"{self.rng.choice(_WORDS)}.example.com"
        fields = {
            name: {"type": self.rng.choice(("string", "integer", "boolean"))}
            for name in self.rng.sample(_CRD_FIELDS, self.rng.randint(4, 9))
        }
        fields["resources"] = {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "description": "Compute resources of the managed pods.",
        }
        return {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}", "labels": self.labels(app, None)},
            "spec": {
                "group": group,
                "names": {"kind": app.title(), "listKind": f"{app.title()}List", "plural": plural},
                "scope": "Namespaced",
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "subresources": {"status": {}},
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {"type": "object", "properties": fields},
                                    "status": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                },
                            }
                        },
                    }
                ],
            },
        }

    def any_object(self, app: str, ns: str, release: str | None) -> tuple[str, dict[str, Any]]:
        """(template file name, object), drawn from a realistic mix of kinds."""
        roll = self.rng.random()
        if roll < 0.26:
            return "deployment.yaml", self.workload("Deployment", app, ns, release)
        if roll < 0.33:
            return "statefulset.yaml", self.workload("StatefulSet", app, ns, release)
        if roll < 0.41:
            return "job.yaml", self.workload("Job", app, ns, release)
        if roll < 0.47:
            return "cronjob.yaml", self.workload("CronJob", app, ns, release)
        if roll < 0.50:
            return "daemonset.yaml", self.workload("DaemonSet", app, ns, release)
        if roll < 0.53:
            return "crd.yaml", self.crd(app)
        if roll < 0.72:
            return "service.yaml", self.service(app, ns, release)
        if roll < 0.87:
            return "configmap.yaml", self.config_map(app, ns, release)
        return "extra.yaml", self.small_object(app, ns, release)


@dataclass(frozen=True)
class PlannedFile:
    """One corpus file: its path, how it is written, and its objects."""

    path: str
    style: str  # helm, plain or json
    chart: str
    objects: list[tuple[str, dict[str, Any]]]


def _plan(gen: Generator, files: int, docs_per_file: int) -> Iterator[PlannedFile]:
    """`files` files of `docs_per_file` objects: every third rendered by Helm, some JSON."""
    for index in range(1, files + 1):
        ns = gen.rng.choice(_TEAMS)
        app = f"{gen.rng.choice(_WORDS)}{index}"
        if index % 3 == 0:  # a Helm release rendered with `helm template`
            objects = [gen.any_object(app, ns, app) for _ in range(docs_per_file)]
            yield PlannedFile(f"rendered/{ns}/{app}.yaml", "helm", app, objects)
        elif index % 20 == 1:  # a `kubectl get -o json` export
            # No mistakes in exports: json.dumps does not say on which line a key lands.
            gen.plant = False
            objects = [gen.any_object(app, ns, None) for _ in range(docs_per_file)]
            gen.plant = True
            yield PlannedFile(f"exports/{ns}/{app}.json", "json", app, objects)
        else:  # hand-written manifests, `---` between the documents
            objects = [gen.any_object(app, ns, None) for _ in range(docs_per_file)]
            yield PlannedFile(f"manifests/{ns}/{app}.yaml", "plain", app, objects)


def _render_yaml(planned: PlannedFile, emitter: Emitter) -> None:
    for i, (template, obj) in enumerate(planned.objects):
        if planned.style == "helm":
            emitter.comment("---")
            emitter.comment(f"# Source: {planned.chart}/templates/{template}")
        elif i:
            emitter.comment("---")
        emitter.document(obj)


def generate(
    out: Path,
    files: int = DEFAULT_FILES,
    docs_per_file: int = DEFAULT_DOCS_PER_FILE,
    seed: int = DEFAULT_SEED,
    mistake_rate: float = DEFAULT_MISTAKE_RATE,
) -> Planted:
    """Replace `out` with `files` files of `docs_per_file` objects each; return what was planted."""
    if out.exists():
        shutil.rmtree(out)
    gen = Generator(seed, mistake_rate)
    planted = Planted()
    for planned in _plan(gen, files, docs_per_file):
        path = out / planned.path
        path.parent.mkdir(parents=True, exist_ok=True)
        if planned.style == "json":
            items = [to_json(obj) for _, obj in planned.objects]
            text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)
            path.write_text(text + "\n", encoding="utf-8")
            continue
        emitter = Emitter()
        _render_yaml(planned, emitter)
        path.write_text("\n".join(emitter.lines) + "\n", encoding="utf-8")
        for line, code, suppressed in emitter.planted:
            (planted.suppressed if suppressed else planted.reported).append(
                (planned.path, line, code)
            )
    manifest = {
        "generator": GENERATOR_VERSION,
        "seed": seed,
        "files": files,
        "docs_per_file": docs_per_file,
        "documents": files * docs_per_file,
        "mistake_rate": mistake_rate,
        "planted": [list(p) for p in planted.reported],
        "suppressed": [list(p) for p in planted.suppressed],
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return planted


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The `.planted.json` of a generated corpus, or None when there is none."""
    try:
        return json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --- cluster profiles ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeGroup:
    """The shape of one EKS node group of a generated profile."""

    prefix: str  # of the node group's name
    instance_type: str
    cpu: str
    memory: str
    gpu: str | None = None  # the extended resource its nodes advertise
    gpus: int = 0
    product: str = ""


# The first three are the groups of the smallest profile: a system pool and one pool that each
# kind of GPU pod of the corpus selects. The rest add variety to larger clusters.
_NODE_GROUPS = (
    NodeGroup("system", "m6i.4xlarge", "15890m", "57691948Ki"),
    NodeGroup(
        "a100",
        "p4d.24xlarge",
        "95690m",
        "1148723328Ki",
        "nvidia.com/gpu",
        8,
        "NVIDIA-A100-SXM4-80GB",
    ),
    NodeGroup(
        "mi300x",
        "Standard_ND96isr_MI300X_v5",
        "95690m",
        "1843741152Ki",
        "amd.com/gpu",
        8,
        "AMD-Instinct-MI300X",
    ),
    NodeGroup(
        "h100",
        "p5.48xlarge",
        "191450m",
        "2002167136Ki",
        "nvidia.com/gpu",
        8,
        "NVIDIA-H100-80GB-HBM3",
    ),
    NodeGroup("a10g", "g5.12xlarge", "47810m", "192103288Ki", "nvidia.com/gpu", 4, "NVIDIA-A10G"),
    NodeGroup("compute", "c6i.8xlarge", "31850m", "60833912Ki"),
    NodeGroup("l4", "g6.2xlarge", "7910m", "31321564Ki", "nvidia.com/gpu", 1, "NVIDIA-L4"),
    NodeGroup("memory", "r6i.8xlarge", "31850m", "253755512Ki"),
)
_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)
_ZONES = ("us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d")


def _node(group: NodeGroup, pool: str, zone: str, serial: int) -> dict[str, Any]:
    """One Node object as `kubectl get nodes -o yaml` prints it."""
    ip = f"10.{serial // 65536 % 256}.{serial // 256 % 256}.{serial % 256}"
    hostname = f"ip-{ip.replace('.', '-')}.us-west-2.compute.internal"
    labels = {
        "alpha.eksctl.io/cluster-name": "bench",
        "eks.amazonaws.com/nodegroup": pool,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": hostname,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": group.instance_type,
        "topology.kubernetes.io/region": "us-west-2",
        "topology.kubernetes.io/zone": zone,
    }
    allocatable = {"cpu": group.cpu, "ephemeral-storage": "95551679124", "memory": group.memory}
    taints: list[dict[str, str]] = []
    if group.gpu is not None:
        vendor = group.gpu.split("/")[0]
        labels[f"{vendor}/gpu.product"] = group.product
        labels[f"{vendor}/gpu.count"] = str(group.gpus)
        labels["nvidia.com/gpu.present" if vendor == "nvidia.com" else "amd.com/gpu.present"] = (
            "true"
        )
        allocatable[group.gpu] = str(group.gpus)
        taints = [
            {"effect": "NoSchedule", "key": group.gpu, "value": "true"},
            {"effect": "NoSchedule", "key": "dedicated", "value": "gpu"},
        ]
    allocatable["pods"] = "250"
    conditions = [
        {
            "lastHeartbeatTime": "2026-12-02T15:58:11Z",
            "lastTransitionTime": "2026-11-20T08:13:02Z",
            "message": message,
            "reason": reason,
            "status": status,
            "type": kind,
        }
        for kind, status, reason, message in _CONDITIONS
    ]
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-{serial:017x}"}
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": "2026-11-20T08:12:44Z",
            "labels": labels,
            "name": hostname,
            "resourceVersion": str(48_000_000 + serial),
            "uid": f"6f1c2a0e-{serial % 65536:04x}-4b7e-9d1a-{serial:012x}",
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": hostname, "type": "Hostname"},
            ],
            "allocatable": allocatable,
            "capacity": dict(allocatable),
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "5.10.226-214.880.amzn2.x86_64",
                "kubeProxyVersion": "v1.30.4-eks-a737599",
                "kubeletVersion": "v1.30.4-eks-a737599",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2",
            },
        },
    }


def make_profile(path: Path, nodes: int, pools: int) -> None:
    """Write a kubectl dump of `nodes` nodes spread evenly over `pools` EKS node groups.

    A `.json` path gets what `kubectl get nodes -o json` prints, anything else `-o yaml`.
    """
    groups = [(f"{_NODE_GROUPS[i % len(_NODE_GROUPS)].prefix}-{i}", i) for i in range(pools)]
    items = []
    for serial in range(nodes):
        name, i = groups[serial % pools]
        group = _NODE_GROUPS[i % len(_NODE_GROUPS)]
        items.append(_node(group, name, _ZONES[i % len(_ZONES)], serial + 1))
    dump = {"apiVersion": "v1", "kind": "List", "items": items}
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(dump, indent=4) + "\n", encoding="utf-8")
        return
    emitter = Emitter()
    emitter.document(dump)
    path.write_text("\n".join(emitter.lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=DEFAULT_FILES)
    parser.add_argument("--docs-per-file", type=int, default=DEFAULT_DOCS_PER_FILE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--mistake-rate",
        type=float,
        default=DEFAULT_MISTAKE_RATE,
        help="share of GPU pods with a planted mistake",
    )
    parser.add_argument("--profile-nodes", type=int, help="also write a kubectl dump of N nodes")
    parser.add_argument("--profile-pools", type=int, default=50, help="node groups of that dump")
    parser.add_argument("--profile-format", choices=("yaml", "json"), default="yaml")
    args = parser.parse_args(argv)
    planted = generate(args.out, args.files, args.docs_per_file, args.seed, args.mistake_rate)
    print(
        f"wrote {args.files * args.docs_per_file} documents in {args.files} files to {args.out} "
        f"({len(planted.reported)} planted findings, {len(planted.suppressed)} suppressed)"
    )
    if args.profile_nodes:
        profile = args.out.parent / f"profile-{args.profile_nodes}.{args.profile_format}"
        make_profile(profile, args.profile_nodes, min(args.profile_pools, args.profile_nodes))
        print(f"wrote {profile}: {args.profile_nodes} nodes")


if __name__ == "__main__":
    main()
