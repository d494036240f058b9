"""`gpulint diagnose`: why the GPU pods of a cluster are Pending now, from their events.

`diagnose(documents, profile, now)` classifies every Pending GPU pod (and every controller
whose GPU pods admission refuses) into one documented cause; `read_dumps` reads
`kubectl get pods,events -A -o yaml` files; gpulint.diagnose.live reads a cluster.
"""

from __future__ import annotations

from gpulint.diagnose.causes import CAUSES, Cause
from gpulint.diagnose.classify import Diagnosis, Evidence, StuckPod, diagnose
from gpulint.diagnose.events import parse_time
from gpulint.diagnose.inputs import read_dumps

__all__ = [
    "CAUSES",
    "Cause",
    "Diagnosis",
    "Evidence",
    "StuckPod",
    "diagnose",
    "parse_time",
    "read_dumps",
]
