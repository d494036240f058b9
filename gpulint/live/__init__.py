"""Live cluster mode: read the cluster profile from the Kubernetes API, and dry-run manifests.

Only this package imports the `kubernetes` client (an optional dependency, `gpulint[live]`),
and only its `client` module does so at import time; a plain `gpulint check` never loads it.
"""
