"""`--profile` files -> one ClusterProfile: read, detect each document's kind, merge in order."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from gpulint.errors import GpulintError
from gpulint.files import decode_input, hash_input, read_input
from gpulint.profile.cache import ProfileCache, entry_hash, entry_key, read_entry, write_entry
from gpulint.profile.merge import ProfileFacts, merge
from gpulint.profile.model import ClusterProfile
from gpulint.yamltree import parse

ACCEPTED = (
    "a gpulint ClusterProfile, a `kubectl get nodes,resourcequotas,limitranges,priorityclasses "
    "-A -o yaml` dump, Kueue ResourceFlavor/ClusterQueue/LocalQueue objects, an eksctl "
    "ClusterConfig, Karpenter NodePools, Cluster API MachineDeployments, GKE ComputeClasses, or "
    "Terraform (.tf files "
    "or a root module's directory)"
)


def load_profiles(
    paths: Sequence[str],
    pool_label: str | None = None,
    cache: ProfileCache | None = None,
    root: str | None = None,
) -> ClusterProfile:
    """Read every profile input in `paths` and merge them, later files winning.

    Relative paths are read from `root` when given (else from the working directory); messages
    and the profile's sources name each path as given. With a `cache`, a file read before (the
    same bytes, the same `pool_label`) is taken from it instead of being parsed again. Raises
    GpulintError (naming file:line:col) for an unreadable file, a document of an unknown kind,
    or a value that does not validate.
    """
    facts: list[ProfileFacts] = []
    for path in paths:
        if is_terraform_path(path, root):
            from gpulint.profile.terraform import facts_from_terraform

            facts.append(facts_from_terraform(path, root, cache))
            continue
        if cache is None:
            facts.extend(profile_facts(path, read_input(path, "profile", root), pool_label))
        else:
            facts.extend(_cached_profile_facts(cache, path, pool_label, root))
    return merge(facts)


def is_terraform_path(path: str, root: str | None = None) -> bool:
    """A `.tf` file, or a directory holding one (a root module); relative to `root` if given."""
    # Here, not in gpulint.profile.terraform: a run that reads no Terraform does not import it.
    if path.endswith(".tf"):
        return True
    where = path if root is None else os.path.join(root, path)
    return os.path.isdir(where) and any(name.endswith(".tf") for name in os.listdir(where))


def _cached_profile_facts(
    cache: ProfileCache, path: str, pool_label: str | None, root: str | None
) -> list[ProfileFacts]:
    """The facts of `path` from the cache, else parsed and stored.

    A large file is hashed as it is read, never held whole: a dump of thousands of nodes is
    tens of megabytes that a run which finds its entry has no use for.
    """
    digest, data = hash_input(path, "profile", lambda size: entry_hash(size, pool_label), root)
    key = digest.hexdigest()
    found = read_entry(cache, key, path)
    if found is None:
        if data is None:
            data = read_input(path, "profile", root)
            key = entry_key(data, pool_label)  # of the bytes parsed, should the file have changed
        found = profile_facts(path, data, pool_label)
        write_entry(cache, key, path, found)
    return found


def read_profile_file(path: str, pool_label: str | None = None) -> list[ProfileFacts]:
    """What each document of one profile input says (one entry per input document)."""
    if is_terraform_path(path):
        from gpulint.profile.terraform import facts_from_terraform

        return [facts_from_terraform(path)]
    return profile_facts(path, read_input(path, "profile"), pool_label)


def profile_facts(path: str, data: bytes, pool_label: str | None = None) -> list[ProfileFacts]:
    """What each document of the profile input `data` (the bytes of `path`) says."""
    # The importers are imported when a file is parsed: a run that finds every profile in the
    # cache does not pay for them.
    from gpulint.profile.clusterapi import facts_from_clusterapi, is_clusterapi_object
    from gpulint.profile.clusterprofile import facts_from_cluster_profile, is_cluster_profile
    from gpulint.profile.computeclass import facts_from_compute_classes, is_compute_class
    from gpulint.profile.eksctl import facts_from_eksctl, is_eksctl_config
    from gpulint.profile.karpenter import facts_from_karpenter, is_karpenter_object
    from gpulint.profile.kubectl import is_kubernetes_objects

    dump = json_dump_facts(path, data, pool_label)
    if dump is not None:
        return [dump]
    result = parse(decode_input(path, data))
    if result.error is not None:
        err = result.error
        raise GpulintError(f"{path}:{err.line}:{err.column}: invalid YAML: {err.problem}")
    values = [d.value for d in result.documents if d.value is not None]
    if not values:
        raise GpulintError(f"{path}: the profile file is empty; give {ACCEPTED}")
    # Loose Node/ResourceQuota/... documents of one file are read together, like a List.
    facts: list[ProfileFacts] = []
    loose: list[Any] = []
    karpenter: list[Any] = []
    clusterapi: list[Any] = []
    compute_classes: list[Any] = []
    # ConfigMaps and Secrets beside Cluster API objects: what a generated cluster template's
    # ClusterResourceSets apply (a CNI, a device plugin); no node group, read past.
    companions: list[Any] = []
    for value in values:
        if _resource_set_payload(value):
            companions.append(value)
        elif is_kubernetes_objects(value):
            loose.append(value)
        elif is_karpenter_object(value):
            karpenter.append(value)
        elif is_clusterapi_object(value):
            clusterapi.append(value)
        elif is_compute_class(value):
            compute_classes.append(value)
        elif is_cluster_profile(value):
            facts.append(facts_from_cluster_profile(value, path))
        elif is_eksctl_config(value):
            facts.append(facts_from_eksctl(value, path))
        else:
            raise GpulintError(f"{_where(path, value)}: {_describe(value)} is not {ACCEPTED}")
    if companions and not clusterapi:
        value = companions[0]
        raise GpulintError(f"{_where(path, value)}: {_describe(value)} is not {ACCEPTED}")
    if loose:
        facts.append(_objects_facts(path, loose, pool_label))
    if karpenter:
        facts.append(facts_from_karpenter(karpenter, path))
    if clusterapi:
        facts.append(facts_from_clusterapi(clusterapi, path))
    if compute_classes:
        facts.append(facts_from_compute_classes(compute_classes, path))
    return facts


def json_dump_facts(path: str, data: bytes, pool_label: str | None = None) -> ProfileFacts | None:
    """What a `kubectl get -o json` dump says, read with the json module; None otherwise.

    A dump of thousands of nodes is tens of megabytes: the json module reads it many times
    faster than the YAML parser, at the price of positions, which only an error message needs.
    So None also for a dump with a problem: profile_facts reads it again to point at it.
    """
    import json  # only a file the cache does not hold is parsed

    from gpulint.profile.kubectl import is_kubernetes_objects

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not is_kubernetes_objects(value):
        return None
    try:
        return _objects_facts(path, [value], pool_label)
    except GpulintError:
        return None


def _objects_facts(path: str, objects: list[Any], pool_label: str | None) -> ProfileFacts:
    # The policy kinds' module reads policies: a profile read from the cache needs neither.
    from gpulint.profile.admission_policies import POLICY_KINDS
    from gpulint.profile.kubectl import facts_from_objects

    found = facts_from_objects(objects, pool_label, path)
    profile = found.profile
    if not (
        found.pools
        or profile.quotas
        or profile.limit_ranges
        or profile.priority_classes
        or profile.cluster_queues
        or profile.local_queues
        or any(_kind_of(o) == "ResourceFlavor" for o in objects)
        # Gatekeeper constraints and Kyverno policies alone (`kubectl get constraints -o yaml`),
        # even those that refuse nothing: the input is what the user meant to give.
        or any(isinstance(k := _kind_of(o), str) and k in POLICY_KINDS for o in objects)
        # `kubectl get deviceclasses,resourceslices -o yaml` alone: the cluster's DRA objects.
        or profile.device_classes
        or profile.resource_slices
        or profile.resource_claims
        # `kubectl get clusterpolicies,nvidiadrivers -o yaml`: the GPU Operator's drivers.
        or any(_kind_of(o) in ("ClusterPolicy", "NVIDIADriver") for o in objects)
    ):
        raise GpulintError(
            f"{_where(path, objects[0])}: no Node, ResourceQuota, LimitRange, PriorityClass, "
            "Kueue or DRA object in this list; give the output of `kubectl get nodes,"
            "resourcequotas,limitranges,priorityclasses -A -o yaml`"
        )
    return found


def _kind_of(value: Any) -> Any:
    """The kind of a document, or of the items of a List (the first that has one)."""
    if not isinstance(value, Mapping):
        return None
    items = value.get("items")
    if value.get("kind") == "List" and isinstance(items, list):
        return next((kind for kind in map(_kind_of, items) if kind), None)
    return value.get("kind")


def _resource_set_payload(value: Any) -> bool:
    """A core ConfigMap or Secret, as a ClusterResourceSet applies to a new cluster."""
    return (
        isinstance(value, Mapping)
        and value.get("apiVersion") == "v1"
        and value.get("kind") in ("ConfigMap", "Secret")
    )


def _where(path: str, value: Any) -> str:
    line, column = getattr(value, "pos", (1, 1))
    return f"{path}:{line}:{column}"


def _describe(value: Any) -> str:
    if not isinstance(value, dict):
        return "this document (not a mapping)"
    kind, api_version = value.get("kind"), value.get("apiVersion")
    if kind is None:
        return "this document (no `kind`)"
    return f"`{api_version}/{kind}`" if api_version else f"`{kind}`"


def profile_problems(paths: Sequence[str], pool_label: str | None = None) -> list[str]:
    """`file:line:col: problem` for each path that `--profile` would refuse (its first problem)."""
    problems = []
    for path in paths:
        try:
            merge(read_profile_file(path, pool_label))
        except GpulintError as exc:
            problems.append(str(exc))
    return problems
