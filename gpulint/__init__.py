"""gpulint: finds why Kubernetes GPU workloads would stay Pending, before they are applied."""

from __future__ import annotations

__version__ = "0.1.0"
