"""Container image references: `registry/path/name:tag@digest`, split into their parts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageRef:
    """A container image reference split into its parts."""

    repository: str  # everything before the tag, registry included
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        """The last path component: `k8s-device-plugin`."""
        return self.repository.rsplit("/", 1)[-1]


def parse_image(image: str) -> ImageRef:
    """`nvcr.io/nvidia/k8s-device-plugin:v0.17.0@sha256:...` -> its repository, tag, digest."""
    rest, _, digest = image.partition("@")
    head, slash, last = rest.rpartition("/")
    name, colon, tag = last.partition(":")
    return ImageRef(f"{head}{slash}{name}", tag if colon else None, digest or None)
