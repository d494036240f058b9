"""`--prices FILE`: hourly prices of nodes, from a CSV the user gives (never bundled).

Two column layouts are read, told apart by their header:

- SkyPilot's catalog (`vms.csv`): `InstanceType,AcceleratorName,AcceleratorCount,vCPUs,
  MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch`; a node is priced by its
  `node.kubernetes.io/instance-type` (and `topology.kubernetes.io/region` when the row names
  one), at `SpotPrice` when the node is a spot node, else at `Price`;
- OpenCost's (and Kubecost's) custom pricing CSV: `EndTimestamp,InstanceID,Region,AssetClass,
  InstanceIDField,InstanceType,MarketPriceHourly,Version`; a `node` row prices the node whose
  `InstanceIDField` (`spec.providerID`, `metadata.name`, `metadata.labels.<key>`) is
  `InstanceID`, or, without one, whose instance type is `InstanceType`, at `MarketPriceHourly`.
  Rows of other asset classes (`pv`, `gpu`, `gpulabel`) are not node prices and are left out.

Only the columns named above are required of each layout (`Price` and `InstanceType`, or
`InstanceID`, `AssetClass` and `MarketPriceHourly`); prices are dollars per hour.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from gpulint.errors import GpulintError
from gpulint.files import decode_input, read_input
from gpulint.profile.values import mapping, text

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
#: Labels that mark a spot (preemptible) node, and the value that does.
SPOT_LABELS = (
    ("karpenter.sh/capacity-type", "spot"),
    ("eks.amazonaws.com/capacityType", "SPOT"),
    ("cloud.google.com/gke-spot", "true"),
    ("cloud.google.com/gke-preemptible", "true"),
    ("kubernetes.azure.com/scalesetpriority", "spot"),
)
_SKYPILOT = frozenset({"InstanceType", "Price"})
_OPENCOST = frozenset({"InstanceID", "AssetClass", "MarketPriceHourly"})


@dataclass(frozen=True)
class NodePrice:
    """A node's hourly price and where it came from (for the report)."""

    hourly: Decimal
    market: str  # on-demand or spot
    row: str  # `prices.csv:3`


@dataclass(frozen=True)
class _Row:
    line: int
    instance_type: str
    region: str
    on_demand: Decimal | None
    spot: Decimal | None
    id_field: str = ""  # OpenCost: the node field InstanceID is matched against
    instance_id: str = ""


@dataclass(frozen=True)
class PriceTable:
    """The node prices of one file."""

    path: str
    layout: str  # skypilot or opencost
    rows: tuple[_Row, ...] = field(default=())

    def price(self, node: Mapping[str, Any]) -> NodePrice | None:
        """The hourly price of a Node object, or None when no row prices it."""
        metadata = mapping(node.get("metadata"))
        labels = mapping(metadata.get("labels"))
        instance_type = next(
            (text(labels.get(k)) for k in INSTANCE_TYPE_LABELS if labels.get(k)), ""
        )
        region = next((text(labels.get(k)) for k in REGION_LABELS if labels.get(k)), "")
        spot = any(text(labels.get(k)) == v for k, v in SPOT_LABELS)
        for row in self.rows:
            if row.region and region and row.region != region:
                continue
            if row.id_field:
                if _node_field(node, row.id_field) != row.instance_id:
                    continue
            elif not instance_type or row.instance_type != instance_type:
                continue
            where = f"{self.path}:{row.line}"
            if spot and row.spot is not None:
                return NodePrice(row.spot, "spot", where)
            if row.on_demand is not None:
                return NodePrice(row.on_demand, "on-demand", where)
        return None


def _node_field(node: Mapping[str, Any], path: str) -> str:
    """The value of an OpenCost InstanceIDField on a Node (`metadata.labels.<key>` keeps the
    dots of the label key)."""
    metadata = mapping(node.get("metadata"))
    if path.startswith("metadata.labels."):
        return text(mapping(metadata.get("labels")).get(path[len("metadata.labels.") :]))
    if path == "metadata.name":
        return text(metadata.get("name"))
    if path == "spec.providerID":
        return text(mapping(node.get("spec")).get("providerID"))
    return ""


def read_prices(path: str) -> PriceTable:
    """The price file at `path`; GpulintError naming the file (and line) when it is not one."""
    data = decode_input(path, read_input(path, "price file"))
    reader = csv.DictReader(io.StringIO(data))
    header = {name.strip() for name in reader.fieldnames or ()}
    if header >= _SKYPILOT:
        layout = "skypilot"
    elif header >= _OPENCOST:
        layout = "opencost"
    else:
        raise GpulintError(
            f"{path}: not a price file: give SkyPilot's columns (InstanceType,...,Price,"
            "SpotPrice,Region) or OpenCost's (InstanceID,Region,AssetClass,InstanceIDField,"
            "InstanceType,MarketPriceHourly)"
        )
    rows: list[_Row] = []
    try:
        for record in reader:
            line = reader.line_num
            values = {
                (k or "").strip(): (v or "").strip()
                for k, v in record.items()
                if isinstance(v, str)
            }
            if layout == "skypilot":
                rows.append(
                    _Row(
                        line,
                        values.get("InstanceType", ""),
                        values.get("Region", ""),
                        _dollars(values.get("Price", ""), path, line),
                        _dollars(values.get("SpotPrice", ""), path, line),
                    )
                )
            elif values.get("AssetClass", "").lower() == "node":
                rows.append(
                    _Row(
                        line,
                        values.get("InstanceType", ""),
                        values.get("Region", ""),
                        _dollars(values.get("MarketPriceHourly", ""), path, line),
                        None,
                        values.get("InstanceIDField", "") if values.get("InstanceID") else "",
                        values.get("InstanceID", ""),
                    )
                )
    except csv.Error as exc:
        raise GpulintError(f"{path}:{reader.line_num}: {exc}") from None
    return PriceTable(path, layout, tuple(rows))


def _dollars(value: str, path: str, line: int) -> Decimal | None:
    if not value:
        return None
    try:
        amount = Decimal(value)
    except InvalidOperation:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount < 0:
        raise GpulintError(f"{path}:{line}: `{value[:40]}` is not an hourly price in dollars")
    return amount
