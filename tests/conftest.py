"""Hypothesis profiles: `default` keeps the suite quick, `--hypothesis-profile=long` digs deeper."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# No deadline: the machine running the suite may be busy, and speed is measured by bench/.
settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
