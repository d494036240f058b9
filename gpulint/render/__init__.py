"""Charts and overlays -> rendered YAML, with the way back to the line the user edits.

`helm template` renders a chart and `kubectl kustomize` (or `kustomize build`) an overlay; a
rendered stream is checked like any manifest, and each finding is moved from the rendered
position to the file the author writes (a values file, a template, a kustomize patch) when
that origin is certain (`gpulint.render.locate`).
"""
