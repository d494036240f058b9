"""What the API server refuses of an object before anything else looks at it.

`apiversions`: the built-in API versions Kubernetes stopped serving or will stop serving (a
table, always available). `target`: which Kubernetes version a run checks against. `kube`:
the upstream OpenAPI schemas of each release (the optional `gpulint[schema]` extra) and the
validators built from them; `crds`: validators built from the CustomResourceDefinitions among
the inputs; `problems`: a validator's errors turned into positioned findings.
"""
