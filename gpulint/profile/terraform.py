"""Terraform node pools (`.tf` files, or a root module's directory) -> pools.

Terraform is evaluated as Terraform would evaluate it (variable defaults, `terraform.tfvars`,
locals, local modules and their inputs, `for_each`/`count`, `for` expressions, `file()` and
`yamldecode()`) by tfparse, an optional dependency (`pip install 'gpulint[terraform]'`),
imported only when a Terraform input is given. Resources read:

- `aws_eks_node_group`, and the `eks_managed_node_groups` / `self_managed_node_groups` inputs of
  the terraform-aws-modules/eks module (or its node-group submodules' inputs);
- `aws_autoscaling_group` (self-managed nodes scaled by cluster-autoscaler): its sizes, its
  launch template's (or launch configuration's, or first mixed-instances override's) instance
  type, and the `k8s.io/cluster-autoscaler/node-template/*` tags, written as `tag` blocks
  (`dynamic "tag"` too) or a `tags` list;
- `google_container_node_pool` and a `google_container_cluster`'s own pools (autoscaling per
  zone or in total, `guest_accelerator`, GKE's automatic GPU taint and labels);
- `azurerm_kubernetes_cluster_node_pool` and an `azurerm_kubernetes_cluster`'s
  `default_node_pool` (`node_taints`, `node_labels`, spot priority, the pool's mode);
- `digitalocean_kubernetes_node_pool` and a `digitalocean_kubernetes_cluster`'s `node_pool`
  (the Droplet `size`, `auto_scale`, `labels`, `taint`, and the taint and labels DOKS gives the
  nodes of a GPU size);
- the control plane's release, which objects are validated against: `aws_eks_cluster`
  `version`, the eks module's `kubernetes_version` (`cluster_version` before v21),
  `azurerm_kubernetes_cluster` `kubernetes_version`, `digitalocean_kubernetes_cluster`
  `version`, and `google_container_cluster` `min_master_version` (the oldest release the
  control plane runs: GKE upgrades it);
- the cluster's name: `aws_eks_cluster`, `google_container_cluster`,
  `azurerm_kubernetes_cluster` and `digitalocean_kubernetes_cluster` `name`, the eks module's
  `name` (`cluster_name` before v21), else the cluster the node pools join.

A value the files cannot decide (a data source, a remote module's output, a variable without
a default) is not guessed silently: the pool takes a stated fallback and the profile lists it
among its assumptions, which `gpulint profile show` prints. Every pool keeps the file and line
of the block that defines it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpulint.errors import GpulintError
from gpulint.profile.autoscaler import (
    EFFECTS,
    aws_template_missing,
    node_template_from_tags,
    template_lacks,
)
from gpulint.profile.cache import ProfileCache, entry_hash, read_entry, write_entry
from gpulint.profile.instances import (
    AMD,
    EFA,
    NVIDIA,
    accelerated_family,
    catalogue_allocatable,
    instance_type,
)
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import (
    GKE_FLEX_START,
    ClusterProfile,
    LabelRequirement,
    Pool,
    Taint,
    unstated_node_labels,
)

EXTRA = "pip install 'gpulint[terraform]'"
_EKS_MODULE = "terraform-aws-modules/eks/aws"
#: A GCP zone (`us-west1-b`), as against a region (`us-west1`).
_GCP_ZONE = re.compile(r"[a-z]+-[a-z]+[0-9]+-[a-z]\Z")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
#: GKE taints GPU nodes so that only pods asking for GPUs land there.
GKE_GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
AKS_SPOT = "kubernetes.azure.com/scalesetpriority"
AKS_MODE = "kubernetes.azure.com/mode"
#: The labels GKE puts on the nodes of a pool of Spot VMs, and of preemptible VMs
#: (cloud.google.com/kubernetes-engine/docs/how-to/spot-vms, .../preemptible-vms).
GKE_SPOT = "cloud.google.com/gke-spot"
GKE_PREEMPTIBLE = "cloud.google.com/gke-preemptible"
#: The label AKS puts on the nodes of an NVIDIA GPU VM size (`accelerator=nvidia` in `kubectl
#: describe node`); the device plugin DaemonSet of Microsoft's "Use GPUs on AKS" article
#: (MicrosoftDocs/azure-aks-docs articles/aks/gpu-cluster.md) selects its nodes by it.
AKS_ACCELERATOR = "kubernetes.azure.com/accelerator"
#: What DOKS puts on the nodes of a GPU pool, by GPU brand: DigitalOcean, "The Managed Elements
#: of DigitalOcean Kubernetes" (docs.digitalocean.com/products/kubernetes/details/managed/,
#: "Automatic Application of Labels and Taints to Nodes"): the taint, with no value, and the
#: `doks.digitalocean.com/gpu-brand` label; `gpu-model` is given for H100 (`h100`) and MI300X
#: (`mi300x`) only.
DOKS_GPU_TAINTS = {
    NVIDIA: Taint(NVIDIA, "", "NoSchedule"),
    AMD: Taint(AMD, "", "NoSchedule"),
}
DOKS_GPU_BRANDS = {NVIDIA: "nvidia", AMD: "amd"}
DOKS_GPU_BRAND = "doks.digitalocean.com/gpu-brand"
DOKS_GPU_MODEL = "doks.digitalocean.com/gpu-model"
DOKS_NODE_POOL = "doks.digitalocean.com/node-pool"
_DOKS_DOCUMENTED_MODELS = frozenset({"h100", "mi300x"})


def require_tfparse(path: str) -> None:
    """A one-line error naming the extra when tfparse is not installed.

    It is looked for, not imported: it runs in a child process (terraform_tree.evaluate)."""
    from importlib.util import find_spec

    try:
        found = find_spec("tfparse")  # optional: only Terraform inputs need it
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise GpulintError(f"{path}: reading Terraform needs the optional tfparse library: {EXTRA}")


@dataclass
class _Reader:
    """Reads values of one block, noting each one the files cannot decide."""

    where: str  # `main.tf:14 aws_eks_node_group.gpu`
    assumptions: list[str] = field(default_factory=list)

    def get(self, block: Mapping[str, Any], key: str, fallback: Any, why: str = "") -> Any:
        value = block.get(key, fallback) if isinstance(block, Mapping) else fallback
        if _unresolved(value):
            self.assumptions.append(
                f"{self.where}: `{key}` is not known from the files{why}; taken as {fallback!r}"
            )
            return fallback
        return value

    def labels(
        self, block: Mapping[str, Any], key: str
    ) -> tuple[dict[str, str], tuple[LabelRequirement, ...]]:
        """The node labels of map `key`: those whose value the files decide, and an `Exists`
        requirement for each one whose value they do not (a variable without a default): its
        nodes carry the label, with a value no file says, so no selector value is ruled out."""
        value = self.get(block, key, {})
        known: dict[str, str] = {}
        open_keys: list[LabelRequirement] = []
        for name, item in value.items() if isinstance(value, Mapping) else ():
            if str(name).startswith("__"):
                continue
            if item is None or _unresolved(item):
                open_keys.append(LabelRequirement(str(name), "Exists"))
                self.assumptions.append(
                    f"{self.where}: the value of label `{name}` is not known from the files; "
                    "taken as any value"
                )
            else:
                known[str(name)] = _text(item)
        return known, tuple(open_keys)


@dataclass(frozen=True)
class _Block:
    """One resource or module block: its values, where it is written, and their reader."""

    values: Mapping[str, Any]
    defined_at: str  # `main.tf:14`
    address: str  # `module.groups["a"].aws_eks_node_group.this`
    reader: _Reader
    module: Mapping[str, Any]  # every block tfparse read, for the ones this one refers to

    def name(self, key: str) -> str:
        """The pool's name: the value of `key`, else the block's own name in the address."""
        fallback = self.address.rsplit(".", 1)[-1]
        return _text(self.reader.get(self.values, key, fallback)) or fallback


def _unresolved(value: Any) -> bool:
    """tfparse leaves what it cannot evaluate as a reference, a block id, null, or a string
    template as written (`"${var.name_prefix}-gpu"`)."""
    if isinstance(value, Mapping) and "__attribute__" in value:
        return True
    if isinstance(value, str) and (_UUID.match(value) or "${" in value):
        return True
    if isinstance(value, list):
        return any(_unresolved(item) for item in value)
    return False


def facts_from_terraform(
    path: str, root: str | None = None, cache: ProfileCache | None = None
) -> ProfileFacts:
    """The node pools a Terraform root module (or the directory of one `.tf` file) defines.

    A relative `path` is read from `root` when given; the files it names are shown relative to
    `root` (else to the working directory) when inside it. With a `cache`, a module whose
    files tfparse would read are all the same as when an entry was written (their names and
    bytes) is not evaluated again; the tree is checked all the same."""
    from gpulint.profile.sandbox import read_only_to
    from gpulint.profile.terraform_tree import evaluate, module_tree, tree_boundary

    named = _shown(path, "", root)  # as messages name it: relative when inside the root
    require_tfparse(named)  # the extra's message before anything else
    where = path if root is None else os.path.join(root, path)
    directory = where if os.path.isdir(where) else os.path.dirname(where) or "."

    def shown(file: str) -> str:
        return _shown(os.path.relpath(file, directory), directory, root)

    boundary = tree_boundary(directory, root)
    restrict = read_only_to([boundary]) if os.name == "posix" else None
    tree = module_tree(directory, boundary, shown, bounded=restrict is not None)
    key = None
    if cache is not None and tree.files is not None:
        key = _entry_key(path, named, shown(directory), directory, tree.files)
        found = read_entry(cache, key, None)
        if found is not None and len(found) == 1:
            return found[0]
    facts = _facts(
        path, named, directory, root, evaluate(directory, named, shown, tree.modules, restrict)
    )
    if cache is not None and key is not None:
        write_entry(cache, key, None, [facts])
    return facts


def _entry_key(
    path: str, named: str, shown: str, directory: str, files: list[tuple[str, bytes | None]]
) -> str:
    """The cache entry of a module: the names the facts hold (the path, as given and as shown,
    and where its files are shown from), tfparse's release, and every file it reads, by its
    name under the module's directory and its bytes."""
    from importlib.metadata import version

    header = ("terraform", path, named, shown, version("tfparse"), _converter_sources())
    digest = entry_hash(0, repr(header))
    for name, data in files:
        where = os.path.relpath(name, directory).encode("utf-8", "surrogateescape")
        size = b"-" if data is None else str(len(data)).encode()
        digest.update(b"%d:%s%s:" % (len(where), where, size))
        digest.update(data or b"")
    return digest.hexdigest()


#: The modules that turn evaluated blocks into facts: an entry is of their sources too, so a
#: gpulint whose reading of Terraform changed (at the same version) reads none it did not write.
_CONVERTERS_SOURCES = ("terraform", "terraform_tree", "autoscaler", "instances")


def _converter_sources() -> str:
    """A CRC-32 of the sources of _CONVERTERS_SOURCES (empty without them)."""
    import binascii

    here = os.path.dirname(os.path.abspath(__file__))
    crc = 0
    for name in _CONVERTERS_SOURCES:
        try:
            with open(os.path.join(here, f"{name}.py"), "rb") as stream:
                crc = binascii.crc32(stream.read(), crc)
        except OSError:
            return ""
    return f"{crc:08x}"


def _facts(
    path: str, named: str, directory: str, root: str | None, blocks: Mapping[str, Any]
) -> ProfileFacts:
    """The facts of the blocks tfparse evaluated in module `directory`."""
    assumptions: list[str] = []
    pools: list[PoolFacts] = []
    # An EKS cluster in the module makes its Auto Scaling groups EKS node groups too.
    providers = {"eks"} if blocks.get("aws_eks_cluster") else set()
    for kind, (provider, convert) in _CONVERTERS.items():
        for values in _blocks(blocks.get(kind)):
            defined_at, address = _meta(directory, values, root)
            reader = _Reader(f"{defined_at} {address}")
            found = list(convert(_Block(values, defined_at, address, reader, blocks)))
            pools += found
            if found and provider is not None:
                providers.add(provider)
            assumptions.extend(reader.assumptions)
    # An Autopilot cluster (google_container_cluster enable_autopilot) has no node pools.
    if any(
        c.get("enable_autopilot") is True for c in _blocks(blocks.get("google_container_cluster"))
    ):
        providers = (providers - {"gke"}) | {"gke-autopilot"}
    provider = providers.pop() if len(providers) == 1 else None
    version, minimum = _cluster_versions(blocks)
    profile = ClusterProfile(
        name=_cluster_name(blocks),
        kubernetes_version=version,
        minimum_kubernetes_version=minimum,
        provider=provider,
        provider_source=f"inferred from the Terraform resources in {named}" if provider else None,
        sources=(path,),
        assumptions=tuple(assumptions),
    )
    return ProfileFacts(profile, tuple(pools))


def _meta(directory: str, block: Mapping[str, Any], root: str | None) -> tuple[str, str]:
    """(`file:line`, address) of a block."""
    meta = block.get("__tfmeta") or {}
    shown = _shown(str(meta.get("filename", "")), directory, root)
    return f"{shown}:{meta.get('line_start', 1)}", _address(block)


def _shown(name: str, directory: str, root: str | None) -> str:
    """A file of the module (`name` relative to its directory) as messages name it: relative
    to the root (the working directory without one) when inside it, as the manifests' own
    paths are."""
    filename = os.path.normpath(os.path.join(directory, name))
    if root is None:
        relative = os.path.relpath(os.path.abspath(filename))
    else:
        relative = os.path.relpath(os.path.join(root, filename), root)
    return filename if relative.startswith("..") else relative


def _address(block: Mapping[str, Any]) -> str:
    """A block's Terraform address (`module.gpu.aws_eks_node_group.this`)."""
    return str((block.get("__tfmeta") or {}).get("path", ""))


def _blocks(value: Any) -> list[Mapping[str, Any]]:
    """A nested block written once (a mapping) or several times (a list)."""
    if isinstance(value, Mapping):
        return [value]
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _labels(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): _text(v) for k, v in value.items() if not str(k).startswith("__")}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _count(reader: _Reader, block: Mapping[str, Any], key: str, fallback: int) -> int:
    value = reader.get(block, key, fallback)
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return fallback


def _most(
    reader: _Reader, block: Mapping[str, Any], key: str, fallback: int
) -> tuple[int, list[str]]:
    """A pool's maximum, the count `key` of `block` (`_count`), with the assumptions reading
    it made: what the maximum rests on (`_ceiling`)."""
    before = len(reader.assumptions)
    return _count(reader, block, key, fallback), reader.assumptions[before:]


def _ceiling(assumed: list[str], values: dict[str, Any]) -> frozenset[str]:
    """Note in a pool's `values` what its maximum rests on (the assumptions made reading it):
    such a maximum is only estimated, and an input that states one wins. The fields that
    are then estimated."""
    if not assumed:
        return frozenset()
    values["ceiling_assumed"] = "; ".join(assumed)
    return frozenset({"max_nodes", "ceiling_assumed"})


def _taint(item: Mapping[str, Any], where: str) -> Taint:
    effect = _text(item.get("effect"))
    if effect not in EFFECTS:
        raise GpulintError(
            f"{where}: taint effect {effect!r} is not one of NO_SCHEDULE, PREFER_NO_SCHEDULE, "
            "NO_EXECUTE (or NoSchedule, PreferNoSchedule, NoExecute)"
        )
    return Taint(_text(item.get("key")), _text(item.get("value")), EFFECTS[effect])


def _pool(
    name: str, defined_at: str, values: Mapping[str, Any], estimated: frozenset[str] = frozenset()
) -> PoolFacts:
    """A pool as the files state it; its allocatable, unless stated, estimated from the
    catalogue by its instance type; its nodes now and the well-known node labels the block
    leaves unsaid only estimated."""
    values = {**values, "defined_at": defined_at}
    # The OS, architecture, zone and region every node has, where the block does not say.
    stated_requirements = tuple(values.get("label_requirements", ()))
    values["label_requirements"] = stated_requirements + unstated_node_labels(
        values.get("labels", {}), frozenset(r.key for r in stated_requirements)
    )
    estimated |= {"nodes", "label_requirements"}
    if "allocatable" not in values:
        allocatable = catalogue_allocatable(values.get("instance_type"))
        if allocatable is not None:
            values["allocatable"] = allocatable
            estimated |= {"allocatable"}
    stated = set(values) - estimated
    return PoolFacts(Pool(name=name, **values), frozenset(stated), estimated)


# --- EKS --------------------------------------------------------------------------------------


def _eks_node_group(block: _Block) -> Iterator[PoolFacts]:
    values, reader = block.values, block.reader
    scaling = (_blocks(values.get("scaling_config")) or [{}])[0]
    types = reader.get(values, "instance_types", ["t3.medium"], " (the EKS default)")
    taints = tuple(_taint(t, block.defined_at) for t in _blocks(values.get("taint")))
    name = block.name("node_group_name")
    yield _eks_pool(name, block.defined_at, reader, scaling, types, values, taints, True)


def _eks_pool(
    name: str,
    defined_at: str,
    reader: _Reader,
    sizes: Mapping[str, Any],
    types: Any,
    group: Mapping[str, Any],
    taints: tuple[Taint, ...],
    managed: bool,
    keys: tuple[str, str, str] = ("min_size", "max_size", "desired_size"),
) -> PoolFacts:
    low = _count(reader, sizes, keys[0], 1)
    high, ceiling = _most(reader, sizes, keys[1], max(low, 3))
    nodes = _count(reader, sizes, keys[2], low)
    instance = _text(types[0]) if isinstance(types, list) and types else _text(types) or None
    labels = {"node.kubernetes.io/instance-type": instance} if instance else {}
    if managed:
        labels["eks.amazonaws.com/nodegroup"] = name
        capacity = _text(group.get("capacity_type")) or "ON_DEMAND"
        labels["eks.amazonaws.com/capacityType"] = capacity
    user, open_labels = reader.labels(group, "labels")
    labels.update(user)
    lacking: tuple[str, ...] = ()  # the autoscaler reads a managed group's labels from EKS
    if not managed:
        tags = {**_labels(group.get("tags")), **_labels(group.get("autoscaling_group_tags"))}
        lacking = template_lacks(node_template_from_tags(tags), user)
    values: dict[str, Any] = {
        "labels": labels,
        "taints": taints,
        "nodes": nodes,
        "min_nodes": low,
        "max_nodes": high,
        "scale_from_zero": high > 0,  # the template comes from the instance type
        "template_missing_labels": lacking,
        "instance_type": instance,
        "label_requirements": open_labels,
    }
    if group.get("enable_efa_support") is True:
        # The EKS module attaches every EFA interface the type has.
        values["unknown_amounts"] = frozenset({EFA})
    estimated = _ceiling(ceiling, values)
    return _pool(name, defined_at, values, estimated)


def _autoscaling_group(block: _Block) -> Iterator[PoolFacts]:
    """A self-managed Auto Scaling group, as cluster-autoscaler sees it at zero nodes."""
    values, reader = block.values, block.reader
    name = _text(reader.get(values, "name", None)) or _text(values.get("name_prefix"))
    template = node_template_from_tags(_asg_tags(values))
    instance = _asg_instance_type(block)
    low = _count(reader, values, "min_size", 0)
    high, ceiling = _most(reader, values, "max_size", low)
    labels = {"node.kubernetes.io/instance-type": instance} if instance else {}
    labels.update(template.labels)
    allocatable = catalogue_allocatable(instance)
    if allocatable is None and template.resources:
        allocatable = dict(template.resources)  # what the autoscaler is told a node has
    pool: dict[str, Any] = {
        "labels": labels,
        "taints": template.taints,
        "nodes": _count(reader, values, "desired_capacity", low),
        "min_nodes": low,
        "max_nodes": high,
        "scale_from_zero": high > 0,
        "instance_type": instance,
        "instance_type_unknown": instance is None,
        "template_missing": aws_template_missing(allocatable or {}, template),
    }
    if allocatable is not None:
        pool["allocatable"] = allocatable
    estimated = _ceiling(ceiling, pool) | {"allocatable"}
    reader.assumptions.append(
        f"{reader.where}: the nodes' labels and taints are taken from its cluster-autoscaler "
        "node-template tags (kubelet flags in user data are not read)"
    )
    yield _pool(name or block.name("name"), block.defined_at, pool, estimated)


def _asg_tags(block: Mapping[str, Any]) -> dict[str, Any]:
    """An ASG's tags: `tag` blocks (also from `dynamic "tag"`) and a `tags` list of maps."""
    entries = [*_blocks(block.get("tag")), *_blocks(block.get("tags"))]
    return {_text(e.get("key")): e.get("value") for e in entries if e.get("key")}


def _asg_instance_type(block: _Block) -> str | None:
    """The instance type cluster-autoscaler sizes the group by: the first mixed-instances
    override's, else its launch template's or launch configuration's."""
    templates = {
        template.get("id"): template
        for kind in ("aws_launch_template", "aws_launch_configuration")
        for template in _blocks(block.module.get(kind))
    }
    reader = block.reader
    policy = (_blocks(block.values.get("mixed_instances_policy")) or [{}])[0]
    nested = (_blocks(policy.get("launch_template")) or [{}])[0]
    for override in _blocks(nested.get("override")):
        if isinstance(override.get("instance_type"), str):
            return override["instance_type"]
    specification = (_blocks(nested.get("launch_template_specification")) or [{}])[0]
    parts = [block.values, *_blocks(block.values.get("launch_template")), specification]
    found = next(
        (
            templates[reference.get("id")]
            for part in parts
            for reference in (part.get("__tfmeta") or {}).get("references") or ()
            if reference.get("id") in templates
        ),
        None,
    )
    if found is None:
        # A reference through a local (as terraform-aws-eks writes it) is not kept: take the
        # one launch template of the same module instance, if there is exactly one.
        module = _module_path(block.address)
        same = [t for t in templates.values() if _module_path(_address(t)) == module]
        found = same[0] if len(same) == 1 else None
    if found is not None:
        return _text(reader.get(found, "instance_type", None)) or None
    reader.assumptions.append(
        f"{reader.where}: its instance type is not known from the files (no launch template "
        "or launch configuration of these files names one); its nodes' size is unknown"
    )
    return None


def _module_path(address: str) -> str:
    """The module instance of a resource address: `module.groups["a"].` of
    `module.groups["a"].aws_autoscaling_group.this[0]`, "" in the root module."""
    head, _, _ = address.rpartition(".")  # drop the resource name
    return head.rpartition(".")[0] + "." if "." in head else ""


def _eks_module(block: _Block) -> Iterator[PoolFacts]:
    """terraform-aws-modules/eks: its node group maps, or a node-group submodule's inputs."""
    module, reader, defined_at = block.values, block.reader, block.defined_at
    source = _text(module.get("source"))
    if _EKS_MODULE not in source:
        return
    if "//modules/" in source:
        managed = "self-managed" not in source
        yield _module_group(defined_at, reader, _text(module.get("name")), module, managed)
        return
    for key, managed in (("eks_managed_node_groups", True), ("self_managed_node_groups", False)):
        groups = reader.get(module, key, {})
        for name, group in groups.items() if isinstance(groups, Mapping) else ():
            if isinstance(group, Mapping) and not str(name).startswith("__"):
                label = _text(group.get("name")) or str(name)
                yield _module_group(defined_at, reader, label, group, managed)


def _module_group(
    defined_at: str, reader: _Reader, name: str, group: Mapping[str, Any], managed: bool
) -> PoolFacts:
    raw = group.get("taints") or {}
    items = raw.values() if isinstance(raw, Mapping) else raw if isinstance(raw, list) else ()
    taints = tuple(_taint(t, defined_at) for t in items if isinstance(t, Mapping))
    if managed:
        types = reader.get(group, "instance_types", ["t3.medium"], " (the module's default)")
    else:
        types = reader.get(group, "instance_type", "m6i.large", " (the module's default)")
    return _eks_pool(name, defined_at, reader, group, types, group, taints, managed)


# --- GKE --------------------------------------------------------------------------------------


def _gke_cluster(gke: _Block) -> Iterator[PoolFacts]:
    """The pools a `google_container_cluster` defines itself: its `node_pool` blocks, else its
    default pool (`default-pool`, of the cluster's `node_config` and `initial_node_count`)
    unless `remove_default_node_pool` deletes it once the cluster is up."""
    cluster = gke.values
    if (cluster.get("__tfmeta") or {}).get("type") == "data" or cluster.get("enable_autopilot"):
        return  # a data source defines nothing; Autopilot makes its nodes per pod
    where = cluster.get("location"), cluster.get("node_locations")
    inline = _blocks(cluster.get("node_pool"))
    if not inline and cluster.get("remove_default_node_pool") is not True:
        inline = [
            {
                "__tfmeta": cluster.get("__tfmeta") or {},
                "name": "default-pool",
                "node_config": cluster.get("node_config"),
                "initial_node_count": cluster.get("initial_node_count", 1),
            }
        ]
    for block in inline:
        meta = block.get("__tfmeta") or {}
        defined_at = f"{gke.defined_at.rpartition(':')[0]}:{meta.get('line_start', 1)}"
        reader = _Reader(f"{defined_at} {gke.address}.node_pool")
        values = {**block}
        for key, value in zip(("location", "node_locations"), where, strict=True):
            if value is not None:
                values.setdefault(key, value)
        found = list(
            _gke_node_pool(
                _Block(values, defined_at, f"{gke.address}.node_pool", reader, gke.module)
            )
        )
        gke.reader.assumptions.extend(reader.assumptions)
        yield from found


def _gke_gpu_pools_only(module: Mapping[str, Any]) -> bool:
    """Whether the module defines a GKE cluster (Standard) and every pool it has holds GPUs:
    the cluster's own pools (or its default pool, unless removed) and every
    `google_container_node_pool` of the module. GKE, "Run GPUs in GKE Standard node pools"
    (cloud.google.com/kubernetes-engine/docs/how-to/gpus): GKE taints GPU nodes
    `nvidia.com/gpu=present:NoSchedule` when a GPU pool is added to a cluster that runs non-GPU
    pools, so a cluster of GPU pools only has no such taint."""
    clusters = [
        c
        for c in _blocks(module.get("google_container_cluster"))
        if (c.get("__tfmeta") or {}).get("type") != "data" and not c.get("enable_autopilot")
    ]
    if len(clusters) != 1:
        return False
    (cluster,) = clusters
    pools = _blocks(cluster.get("node_pool"))
    if not pools and cluster.get("remove_default_node_pool") is not True:
        pools = [{"node_config": cluster.get("node_config")}]
    pools += _blocks(module.get("google_container_node_pool"))
    return bool(pools) and all(_has_gpus(pool) for pool in pools)


def _has_gpus(pool: Mapping[str, Any]) -> bool:
    """Whether a GKE pool block surely has GPUs: a guest accelerator, or a machine type that
    comes with them (a2, a3, g2)."""
    config = (_blocks(pool.get("node_config")) or [{}])[0]
    for accelerator in _blocks(config.get("guest_accelerator")):
        count = accelerator.get("count", 1)  # the provider's default
        if count not in (0, "0", None) and not _unresolved(count):
            return True
    machine = config.get("machine_type")
    return isinstance(machine, str) and NVIDIA in (catalogue_allocatable(machine) or {})


def _gke_node_pool(gke: _Block) -> Iterator[PoolFacts]:
    block, reader, defined_at = gke.values, gke.reader, gke.defined_at
    name = gke.name("name")
    config = (_blocks(block.get("node_config")) or [{}])[0]
    machine = _text(reader.get(config, "machine_type", "e2-medium", " (GKE's default)"))
    zones = reader.get(block, "node_locations", None)
    location = block.get("location")
    if zones is None and isinstance(location, str) and _GCP_ZONE.match(location):
        zones = [location]  # a zonal cluster's pool: its nodes are in that one zone
    zone_count = len(zones) if isinstance(zones, list) and zones else 1
    scaling = (_blocks(block.get("autoscaling")) or [None])[0]
    # Nodes per zone now: node_count, else initial_node_count, else the autoscaler's minimum.
    first = _count(reader, scaling, "min_node_count", 0) if scaling is not None else 1
    nodes = _count(reader, block, "node_count", _count(reader, block, "initial_node_count", first))
    labels = {
        "cloud.google.com/gke-nodepool": name,
        "node.kubernetes.io/instance-type": machine,
    }
    stated, open_labels = reader.labels(config, "labels")
    labels.update(stated)
    # GKE labels the nodes of Spot and preemptible VMs (and taints neither).
    if reader.get(config, "spot", False) is True:
        labels[GKE_SPOT] = "true"
    elif reader.get(config, "preemptible", False) is True:
        labels[GKE_PREEMPTIBLE] = "true"
    if reader.get(config, "flex_start", False) is True:
        # GKE labels flex-start nodes so; their VMs come when pods ask (Pool.made_per_pod).
        labels[GKE_FLEX_START] = "true"
    taints = [_taint(t, defined_at) for t in _blocks(config.get("taint"))]
    allocatable = dict(catalogue_allocatable(machine) or {})
    estimated = {"allocatable"} if allocatable else set()
    for accelerator in _blocks(config.get("guest_accelerator")):
        count = _count(reader, accelerator, "count", 1)
        sharing = (_blocks(accelerator.get("gpu_sharing_config")) or [{}])[0]
        clients = _count(reader, sharing, "max_shared_clients_per_gpu", 1) if sharing else 1
        # Time-sharing and MPS advertise each GPU once per client.
        allocatable[NVIDIA] = Decimal(count * clients)
        labels["cloud.google.com/gke-accelerator"] = _text(accelerator.get("type"))
        # GKE labels the nodes of a pool it installs the driver on with the driver version
        # (its own driver installer DaemonSet selects the nodes without that label).
        install = (_blocks(accelerator.get("gpu_driver_installation_config")) or [{}])[0]
        version = _text(install.get("gpu_driver_version")) if install else ""
        if version.upper() in ("DEFAULT", "LATEST"):
            labels["cloud.google.com/gke-gpu-driver-version"] = version.lower()
        if sharing:
            labels["cloud.google.com/gke-gpu-sharing-strategy"] = _text(
                sharing.get("gpu_sharing_strategy")
            ).lower()
            labels["cloud.google.com/gke-max-shared-clients-per-gpu"] = str(clients)
        if accelerator.get("gpu_partition_size"):
            labels["cloud.google.com/gke-gpu-partition-size"] = _text(
                accelerator["gpu_partition_size"]
            )
            reader.assumptions.append(
                f"{reader.where}: GPU partitions ({accelerator['gpu_partition_size']}) are "
                f"advertised as nvidia.com/gpu; taken as {count} per node"
            )
        estimated.discard("allocatable")
    if NVIDIA in allocatable:
        labels.setdefault("cloud.google.com/gke-accelerator", "nvidia")
        # GKE taints the nodes of a GPU pool itself when the cluster has pools without GPUs:
        # not when the module shows every pool of its cluster and each has GPUs.
        if GKE_GPU_TAINT not in taints and not _gke_gpu_pools_only(gke.module):
            taints.append(GKE_GPU_TAINT)
    before = len(reader.assumptions)  # what the maximum rests on, read first
    if scaling is None:
        high = nodes * zone_count  # node_count is per zone too
        after = len(reader.assumptions)
        low = high
    elif "total_max_node_count" in scaling:
        high = _count(reader, scaling, "total_max_node_count", nodes)
        after = len(reader.assumptions)
        low = _count(reader, scaling, "total_min_node_count", 0)
    else:
        # min/max_node_count are per zone of node_locations.
        high = _count(reader, scaling, "max_node_count", nodes) * zone_count
        if zone_count == 1 and zones is None:
            reader.assumptions.append(
                f"{reader.where}: autoscaling bounds are per zone and node_locations is not "
                "set; taken as one zone"
            )
        after = len(reader.assumptions)
        low = _count(reader, scaling, "min_node_count", 0) * zone_count
    values: dict[str, Any] = {
        "labels": labels,
        # A node is in one of node_locations.
        "label_requirements": open_labels
        + (
            (LabelRequirement("topology.kubernetes.io/zone", "In", tuple(map(_text, zones))),)
            if isinstance(zones, list) and zones
            else ()
        ),
        "taints": tuple(taints),
        "nodes": nodes * zone_count,
        "min_nodes": low,
        "max_nodes": high,
        "scale_from_zero": scaling is not None and high > 0,
        "instance_type": machine,
    }
    if allocatable:
        values["allocatable"] = allocatable
    ceiling = reader.assumptions[before:after]
    yield _pool(name, defined_at, values, frozenset(estimated) | _ceiling(ceiling, values))


# --- AKS --------------------------------------------------------------------------------------


def _aks_node_pool(aks: _Block) -> Iterator[PoolFacts]:
    """An `azurerm_kubernetes_cluster_node_pool`: a user pool unless its `mode` says System."""
    system = _text(aks.values.get("mode")).lower() == "system"
    yield _aks_pool(aks.name("name"), aks.values, aks.reader, aks.defined_at, system)


def _aks_cluster(aks: _Block) -> Iterator[PoolFacts]:
    """The `default_node_pool` of an `azurerm_kubernetes_cluster`: every AKS cluster has it,
    and it is a system pool."""
    if (aks.values.get("__tfmeta") or {}).get("type") == "data":
        return  # a data source reads a cluster; it defines no pool
    for block in _blocks(aks.values.get("default_node_pool")):
        meta = block.get("__tfmeta") or {}
        defined_at = f"{aks.defined_at.rpartition(':')[0]}:{meta.get('line_start', 1)}"
        reader = _Reader(f"{defined_at} {aks.address}.default_node_pool")
        name = _text(reader.get(block, "name", "default")) or "default"
        pool = _aks_pool(name, block, reader, defined_at, True)
        aks.reader.assumptions.extend(reader.assumptions)
        yield pool


def _aks_pool(
    name: str, block: Mapping[str, Any], reader: _Reader, defined_at: str, system: bool
) -> PoolFacts:
    vm_size = _text(reader.get(block, "vm_size", "Standard_D2s_v3"))
    autoscaled = bool(block.get("auto_scaling_enabled") or block.get("enable_auto_scaling"))
    nodes = _count(reader, block, "node_count", 1)
    labels = {
        "kubernetes.azure.com/agentpool": name,
        "agentpool": name,
        # AKS labels every node with its pool's mode (learn.microsoft.com/azure/aks/
        # use-system-pools): `system` for the pools that host the cluster's own pods.
        AKS_MODE: "system" if system else "user",
        "node.kubernetes.io/instance-type": vm_size,
    }
    known = instance_type(vm_size)
    if known is not None and known.accelerators.get(NVIDIA):
        labels[AKS_ACCELERATOR] = "nvidia"
    stated, open_labels = reader.labels(block, "node_labels")
    labels.update(stated)
    taints = []
    for written in reader.get(block, "node_taints", []) or []:
        head, _, effect = _text(written).rpartition(":")
        key, _, value = head.partition("=")
        if not key or effect not in EFFECTS:
            raise GpulintError(
                f"{defined_at}: node_taints: {written!r} is not `key=value:NoSchedule`"
            )
        taints.append(Taint(key, value, EFFECTS[effect]))
    if block.get("only_critical_addons_enabled") is True:
        # A system pool kept for the cluster's own pods: AKS taints it so.
        taints.append(Taint("CriticalAddonsOnly", "true", "NoSchedule"))
    if _text(block.get("priority")) == "Spot":
        # AKS taints and labels spot node pools itself.
        labels[AKS_SPOT] = "spot"
        taints.append(Taint(AKS_SPOT, "spot", "NoSchedule"))
    low = _count(reader, block, "min_count", nodes) if autoscaled else nodes
    high, ceiling = _most(reader, block, "max_count", nodes) if autoscaled else (nodes, [])
    values: dict[str, Any] = {
        "labels": labels,
        "label_requirements": open_labels,
        "taints": tuple(taints),
        "nodes": nodes,
        "min_nodes": low,
        "max_nodes": high,
        "scale_from_zero": autoscaled and high > 0,
        "instance_type": vm_size,
    }
    return _pool(name, defined_at, values, _ceiling(ceiling, values))


# --- DOKS -------------------------------------------------------------------------------------


def _doks_node_pool(doks: _Block) -> Iterator[PoolFacts]:
    """A `digitalocean_kubernetes_node_pool`."""
    if (doks.values.get("__tfmeta") or {}).get("type") == "data":
        return  # a data source reads a pool; it defines none
    yield _doks_pool(doks.name("name"), doks.values, doks.reader, doks.defined_at)


def _doks_cluster(doks: _Block) -> Iterator[PoolFacts]:
    """The `node_pool` of a `digitalocean_kubernetes_cluster`: every DOKS cluster has one."""
    if (doks.values.get("__tfmeta") or {}).get("type") == "data":
        return  # a data source reads a cluster; it defines no pool
    for block in _blocks(doks.values.get("node_pool")):
        meta = block.get("__tfmeta") or {}
        defined_at = f"{doks.defined_at.rpartition(':')[0]}:{meta.get('line_start', 1)}"
        reader = _Reader(f"{defined_at} {doks.address}.node_pool")
        name = _text(reader.get(block, "name", "default")) or "default"
        pool = _doks_pool(name, block, reader, defined_at)
        doks.reader.assumptions.extend(reader.assumptions)
        yield pool


def _doks_pool(name: str, block: Mapping[str, Any], reader: _Reader, defined_at: str) -> PoolFacts:
    """A DOKS pool: its Droplet size, its scaling, its labels and taints, and the label and
    taint DOKS adds to the nodes of a GPU size."""
    size = block.get("size")
    if not isinstance(size, str) or not size or _unresolved(size):
        reader.assumptions.append(
            f"{reader.where}: `size` is not known from the files; what its nodes have "
            "(GPUs included), and whether DOKS gives them its GPU labels and taint, is unknown"
        )
        size = None
    autoscaled = block.get("auto_scale") is True
    # DOKS's reconciler keeps the pool's name on every node; DigitalOcean's cloud controller
    # manager labels a node with its Droplet's size slug (digitalocean-cloud-controller-
    # manager cloud-controller-manager/do/droplets.go, InstanceType).
    labels: dict[str, str] = {}
    stated, open_labels = reader.labels(block, "labels")
    written = block.get("name")
    if isinstance(written, str) and written and not _unresolved(written):
        labels[DOKS_NODE_POOL] = name
    else:  # its nodes carry the name the files do not decide
        open_labels += (LabelRequirement(DOKS_NODE_POOL, "Exists"),)
    if size:
        labels["node.kubernetes.io/instance-type"] = size
    else:
        open_labels += (LabelRequirement("node.kubernetes.io/instance-type", "Exists"),)
    taints = [_taint(t, defined_at) for t in _blocks(block.get("taint"))]
    known = instance_type(size)
    resource = next((r for r in DOKS_GPU_BRANDS if known and known.accelerators.get(r)), None)
    undecided: tuple[str, ...] = ()
    if known is None and (size is None or accelerated_family(size)):
        # A size the files do not decide, or a GPU Droplet the catalogue does not list: whether
        # its nodes carry DOKS's GPU labels and taint is unknown. Neither is added; a verdict
        # that rests on the labels' absence is a warning naming them.
        undecided = (DOKS_GPU_BRAND, DOKS_GPU_MODEL)
        if size is not None:
            reader.assumptions.append(
                f"{reader.where}: `size` `{size}` is a GPU Droplet size gpulint does not list; "
                "its GPUs, and the GPU labels and taint DOKS gives its nodes, are unknown"
            )
    if known is not None and resource is not None:
        labels[DOKS_GPU_BRAND] = DOKS_GPU_BRANDS[resource]
        if known.model in _DOKS_DOCUMENTED_MODELS:
            labels[DOKS_GPU_MODEL] = known.model
        else:
            open_labels += (LabelRequirement(DOKS_GPU_MODEL, "Exists"),)
            reader.assumptions.append(
                f"{reader.where}: DOKS labels the nodes of `{size}` {DOKS_GPU_MODEL} with a "
                "value no DigitalOcean page gives; taken as any value"
            )
        platform = DOKS_GPU_TAINTS[resource]
        # A node has one taint per key and effect: one the files write is kept.
        if not any((t.key, t.effect) == (platform.key, platform.effect) for t in taints):
            taints.append(platform)
    labels.update(stated)
    low = _count(reader, block, "min_nodes", 0) if autoscaled else 0
    high, ceiling = _most(reader, block, "max_nodes", low) if autoscaled else (0, [])
    nodes = _count(reader, block, "node_count", low if autoscaled else 1)
    if not autoscaled:
        low = high = nodes
    values: dict[str, Any] = {
        "labels": labels,
        "label_requirements": open_labels,
        "taints": tuple(taints),
        "nodes": nodes,
        "min_nodes": low,
        "max_nodes": high,
        "scale_from_zero": autoscaled and high > 0,
        "instance_type": size,
        "instance_type_unknown": size is None,
        "undecided_labels": undecided,
        # Nodes with those labels are GPU Droplets, which DOKS taints by their brand.
        "undecided_taints": tuple(DOKS_GPU_TAINTS.values()) if undecided else (),
    }
    return _pool(name, defined_at, values, _ceiling(ceiling, values))


#: The control plane's release: (block kind, argument, whether it is only the oldest the API
#: server runs). GKE upgrades a control plane past its min_master_version on its own.
_CLUSTER_VERSIONS = (
    ("aws_eks_cluster", "version", False),
    ("module", "kubernetes_version", False),  # terraform-aws-modules/eks 21
    ("module", "cluster_version", False),  # terraform-aws-modules/eks up to 20
    ("azurerm_kubernetes_cluster", "kubernetes_version", False),
    ("google_container_cluster", "min_master_version", True),
    ("digitalocean_kubernetes_cluster", "version", False),  # `1.33.1-do.3`
)


#: The cluster's name: (block kind, argument). The eks module's is `name` from v21,
#: `cluster_name` before.
_CLUSTER_NAMES = (
    ("aws_eks_cluster", "name"),
    ("module", "name"),
    ("module", "cluster_name"),
    ("google_container_cluster", "name"),
    ("azurerm_kubernetes_cluster", "name"),
    ("digitalocean_kubernetes_cluster", "name"),
)


#: Where node pools name the cluster they join, for a module that has only its node pools.
_JOINED_CLUSTER_NAMES = (
    ("aws_eks_node_group", "cluster_name"),
    ("google_container_node_pool", "cluster"),  # a name, or projects/.../clusters/NAME
)


def _cluster_name(blocks: Mapping[str, Any]) -> str | None:
    """The name the module gives its cluster, when it defines one cluster (or several of one
    name) whose name the files decide, else the one cluster its node pools all join; None
    otherwise."""
    for names in (_CLUSTER_NAMES, _JOINED_CLUSTER_NAMES):
        found: set[str] = set()
        for kind, key in names:
            for block in _blocks(blocks.get(kind)):
                if kind == "module" and not _is_eks_cluster_module(block):
                    continue
                value = block.get(key)
                if isinstance(value, str) and value and not _unresolved(value):
                    found.add(value.rsplit("/clusters/", 1)[-1])
        if found:
            return found.pop() if len(found) == 1 else None
    return None


def _is_eks_cluster_module(block: Mapping[str, Any]) -> bool:
    """The terraform-aws-modules/eks module itself, not one of its node-group submodules."""
    source = _text(block.get("source"))
    return _EKS_MODULE in source and "//modules/" not in source


def _cluster_versions(blocks: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The release the clusters of the module state (exact, and a minimum), each None unless
    every cluster that states one states the same; values the files cannot decide are none."""
    found: dict[bool, set[str]] = {False: set(), True: set()}
    for kind, key, minimum in _CLUSTER_VERSIONS:
        for block in _blocks(blocks.get(kind)):
            # A node-group submodule's version is its nodes' (kubelets'), not the cluster's.
            if kind == "module" and not _is_eks_cluster_module(block):
                continue
            value = block.get(key)
            if isinstance(value, str) and value and not _unresolved(value):
                found[minimum].add(value)
    exact, least = found[False], found[True]
    return (
        exact.pop() if len(exact) == 1 else None,
        least.pop() if len(least) == 1 else None,
    )


#: Each block kind read, in the order its pools are listed: the provider its pools imply, and
#: what turns one block into pools.
_CONVERTERS: Mapping[str, tuple[str | None, Callable[[_Block], Iterator[PoolFacts]]]] = {
    "aws_eks_node_group": ("eks", _eks_node_group),
    "module": ("eks", _eks_module),
    "aws_autoscaling_group": (None, _autoscaling_group),
    "google_container_cluster": ("gke", _gke_cluster),
    "google_container_node_pool": ("gke", _gke_node_pool),
    "azurerm_kubernetes_cluster": ("aks", _aks_cluster),
    "azurerm_kubernetes_cluster_node_pool": ("aks", _aks_node_pool),
    "digitalocean_kubernetes_cluster": ("doks", _doks_cluster),
    "digitalocean_kubernetes_node_pool": ("doks", _doks_node_pool),
}
