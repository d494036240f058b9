"""Write a deterministic corpus of realistic Kubernetes manifests for benchmarking gpulint.

The corpus mixes plain manifest files, Helm-rendered multi-document files (with `# Source:`
comments) and a few JSON `kind: List` files. Workloads look like what charts render: labels,
annotations, probes, env lists, init containers, tolerations, affinity and GPU resources.

A known set of mistakes is planted in GPU containers (GPU001-GPU004, GPU601), some of them
suppressed with `# gpulint: ignore[...]`; `.planted.json` (a hidden file, so gpulint skips it)
lists every planted finding as path, line and code, so a test can check that lint() finds
exactly those.

Usage: python bench/generate.py [--documents N] [--out DIR] [--seed S]
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

DEFAULT_DOCUMENTS = 9200
DEFAULT_OUT = Path(__file__).resolve().parent / "corpus"
DEFAULT_SEED = 9200
DEFAULT_MISTAKE_RATE = 0.25
MANIFEST = ".planted.json"
#: Bumped whenever the generated text changes, so stale corpora are regenerated.
GENERATOR_VERSION = 1

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
        for env_name in self.rng.sample(_ENV_NAMES, self.rng.randint(2, 6)):
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
        if self.rng.random() < 0.5:
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
        if self.rng.random() < 0.5:
            container["livenessProbe"] = self.probe(port)
        if self.rng.random() < 0.5:
            container["readinessProbe"] = self.probe(port)
        container["securityContext"] = {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        }
        return container

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
        if self.rng.random() < 0.4:
            spec["initContainers"] = [self.init_container(not besteffort)]
        containers = [self.container(app, gpu, mistake, port)]
        if self.rng.random() < 0.15:
            sidecar = self.container(f"{app}-exporter", None, None, 9100)
            if besteffort:
                del sidecar["resources"]
            containers.append(sidecar)
        spec["containers"] = containers
        if gpu is not None:
            spec["nodeSelector"] = Flow({"node.kubernetes.io/instance-type": "p4d.24xlarge"})
            spec["tolerations"] = [
                {"key": gpu, "operator": "Exists", "effect": "NoSchedule"},
                {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
            ]
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "nvidia.com/gpu.product",
                                        "operator": "In",
                                        "values": [
                                            "NVIDIA-A100-SXM4-80GB",
                                            "NVIDIA-H100-80GB-HBM3",
                                        ],
                                    }
                                ]
                            }
                        ]
                    }
                }
            }
        elif self.rng.random() < 0.5:
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
        spec["volumes"] = [
            {"name": "cache", "emptyDir": {"sizeLimit": "20Gi"}},
            {"name": "config", "configMap": {"name": f"{app}-config"}},
        ]
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

    def any_object(self, app: str, ns: str, release: str | None) -> tuple[str, dict[str, Any]]:
        """(template file name, object), drawn from a realistic mix of kinds."""
        roll = self.rng.random()
        if roll < 0.28:
            return "deployment.yaml", self.workload("Deployment", app, ns, release)
        if roll < 0.36:
            return "statefulset.yaml", self.workload("StatefulSet", app, ns, release)
        if roll < 0.44:
            return "job.yaml", self.workload("Job", app, ns, release)
        if roll < 0.50:
            return "cronjob.yaml", self.workload("CronJob", app, ns, release)
        if roll < 0.53:
            return "daemonset.yaml", self.workload("DaemonSet", app, ns, release)
        if roll < 0.73:
            return "service.yaml", self.service(app, ns, release)
        if roll < 0.88:
            return "configmap.yaml", self.config_map(app, ns, release)
        return "extra.yaml", self.small_object(app, ns, release)


def _files(gen: Generator, documents: int) -> Iterator[tuple[str, str | list[Any], int]]:
    """(relative path, YAML text pieces or JSON items, object count) until `documents` objects."""
    left = documents
    index = 0
    while left > 0:
        index += 1
        ns = gen.rng.choice(_TEAMS)
        app = f"{gen.rng.choice(_WORDS)}{index}"
        roll = gen.rng.random()
        if roll < 0.03:  # a JSON List, as `kubectl get -o json` writes it
            count = min(left, gen.rng.randint(5, 15))
            # No mistakes in exports: json.dumps does not say on which line a key lands.
            gen.plant = False
            items = [gen.any_object(app, ns, None)[1] for _ in range(count)]
            gen.plant = True
            yield f"exports/{ns}/{app}.json", items, count
        elif roll < 0.40:  # a Helm release rendered with `helm template`
            count = min(left, gen.rng.randint(4, 12))
            objects = [gen.any_object(app, ns, app) for _ in range(count)]
            yield f"rendered/{ns}/{app}.yaml", [("helm", app, objects)], count
        else:  # a hand-written manifest with one to three documents
            count = min(left, gen.rng.choice((1, 1, 2, 3)))
            objects = [gen.any_object(app, ns, None) for _ in range(count)]
            yield f"manifests/{ns}/{app}.yaml", [("plain", app, objects)], count
        left -= count


def _render_yaml(style: str, chart: str, objects: list[tuple[str, Any]], emitter: Emitter) -> None:
    for i, (template, obj) in enumerate(objects):
        if style == "helm":
            emitter.comment("---")
            emitter.comment(f"# Source: {chart}/templates/{template}")
        elif i:
            emitter.comment("---")
        emitter.document(obj)


def generate(
    out: Path,
    documents: int = DEFAULT_DOCUMENTS,
    seed: int = DEFAULT_SEED,
    mistake_rate: float = DEFAULT_MISTAKE_RATE,
) -> Planted:
    """Replace `out` with a corpus of `documents` Kubernetes objects; return what was planted."""
    if out.exists():
        shutil.rmtree(out)
    gen = Generator(seed, mistake_rate)
    planted = Planted()
    files = 0
    for relative, content, _count in _files(gen, documents):
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if relative.endswith(".json"):
            items = [to_json(obj) for obj in content]
            text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)
            path.write_text(text + "\n", encoding="utf-8")
        else:
            emitter = Emitter()
            for style, chart, objects in content:
                _render_yaml(style, chart, objects, emitter)
            path.write_text("\n".join(emitter.lines) + "\n", encoding="utf-8")
            for line, code, suppressed in emitter.planted:
                (planted.suppressed if suppressed else planted.reported).append(
                    (relative, line, code)
                )
        files += 1
    manifest = {
        "generator": GENERATOR_VERSION,
        "seed": seed,
        "documents": documents,
        "mistake_rate": mistake_rate,
        "files": files,
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


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=DEFAULT_DOCUMENTS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--mistake-rate",
        type=float,
        default=DEFAULT_MISTAKE_RATE,
        help="share of GPU pods with a planted mistake",
    )
    args = parser.parse_args(argv)
    planted = generate(args.out, args.documents, args.seed, args.mistake_rate)
    manifest = read_manifest(args.out) or {}
    print(
        f"wrote {args.documents} documents in {manifest.get('files')} files to {args.out} "
        f"({len(planted.reported)} planted findings, {len(planted.suppressed)} suppressed)"
    )


if __name__ == "__main__":
    main()
