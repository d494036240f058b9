"""Who holds each pool's GPUs in a dump: what names the workloads behind a pool at its maximum
size (gpulint.diagnose.classify)."""

from __future__ import annotations

from decimal import Decimal

from gpulint.diagnose.gather import Gathered
from gpulint.errors import GpulintError
from gpulint.gpus import gpu_requests
from gpulint.pods import pod_owner
from gpulint.profile.nodes import node_view, pool_names
from gpulint.profile.values import mapping, text
from gpulint.workloads import pod_template


class PoolUsage:
    """What the bound, unfinished GPU pods of a dump hold on each pool's nodes, by workload:
    pool -> (namespace, kind, name) of the owner -> (amount per resource, pods). Read once,
    the first time a pool at its maximum size asks."""

    def __init__(self, gathered: Gathered, pool_label: str | None) -> None:
        self._gathered = gathered
        self._pool_label = pool_label
        self._by_pool: dict[str, dict[tuple[str, str, str], tuple[dict[str, Decimal], int]]] = {}
        self._read = False

    def of(self, pool: str) -> dict[tuple[str, str, str], tuple[dict[str, Decimal], int]]:
        """The holders of `pool`'s GPUs."""
        if not self._read:
            self._read = True
            self._by_pool = self._holders()
        return self._by_pool.get(pool, {})

    def _holders(self) -> dict[str, dict[tuple[str, str, str], tuple[dict[str, Decimal], int]]]:
        try:
            nodes = [node_view(n) for n in self._gathered.nodes]
        except GpulintError:
            return {}  # a node the profile could not read either: its pool is not named
        pools = pool_names(nodes, self._pool_label) if nodes else {}
        found: dict[str, dict[tuple[str, str, str], tuple[dict[str, Decimal], int]]] = {}
        for document in self._gathered.pods:
            obj = document.obj
            node = text(mapping(obj.get("spec")).get("nodeName"))
            phase = text(mapping(obj.get("status")).get("phase"))
            if node not in pools or phase in ("Succeeded", "Failed"):
                continue
            template = pod_template(document, obj)
            gpus = gpu_requests(template) if template is not None else {}
            if not gpus:
                continue
            owner = pod_owner(obj)
            held, pods = found.setdefault(pools[node], {}).get(owner, ({}, 0))
            for resource, amount in gpus.items():
                held[resource] = held.get(resource, Decimal(0)) + amount
            found[pools[node]][owner] = (held, pods + 1)
        return found
