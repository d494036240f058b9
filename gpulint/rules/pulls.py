"""GPU610 always-pull-multi-gb-gpu-image: a GPU pod that asks the registry for a multi-GB image
at every start; GPU804 invalid-image-reference: a GPU pod's image the kubelet cannot parse."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpulint.data.image_sizes import IMAGE_SIZES, ImageSize
from gpulint.gpus import gpu_requests
from gpulint.images import reference_problem
from gpulint.rules.base import CheckContext, Problem

if TYPE_CHECKING:
    from gpulint.model import Container, PodTemplate

#: Registry and namespace prefixes Docker Hub references may carry.
_HUB_PREFIXES = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def image_size(image: str) -> ImageSize | None:
    """The size row of `image` (`repo:tag`, `repo@digest`, no tag: `latest`); None when the
    table does not know its tag."""
    rest = image.strip().partition("@")[0]
    head, slash, last = rest.rpartition("/")
    name, _, tag = last.partition(":")
    repository = f"{head}{slash}{name}"
    for prefix in _HUB_PREFIXES:
        if repository.startswith(prefix):
            repository = repository[len(prefix) :]
            break
    repository = repository.removeprefix("library/")
    tag = tag or "latest"
    for row in IMAGE_SIZES:
        if repository in row.repositories and re.fullmatch(row.tag, tag):
            return row
    return None


def implies_always(image: str) -> bool:
    """Whether an omitted imagePullPolicy defaults to Always: the tag is `latest` or there is
    none, and no digest pins the image."""
    if "@" in image:
        return False
    last = image.strip().rpartition("/")[2]
    _, colon, tag = last.partition(":")
    return not colon or tag == "latest"


def _gpu_pod_images(ctx: CheckContext) -> Iterator[tuple[PodTemplate, Container, str]]:
    """Each container of a GPU pod that names its image, with the image."""
    for _, template in ctx.pod_templates():
        if not gpu_requests(template):
            continue
        for container in template.containers:
            image = container.node.get("image")
            if isinstance(image, str):
                yield template, container, image


def always_pull_multi_gb_gpu_image(ctx: CheckContext) -> Iterator[Problem]:
    """imagePullPolicy Always (written, or implied by `:latest`) on a GPU pod's multi-GB image."""
    for template, container, image in _gpu_pod_images(ctx):
        node = container.node
        row = image_size(image)
        if row is None:
            continue
        policy = node.get("imagePullPolicy")
        what = f"{row.family}, about {row.gigabytes:g} GB (source: {row.source})"
        cost = (
            "every start of this GPU pod asks the registry for the tag, and when the tag has "
            "moved the kubelet pulls the new layers while the GPUs wait; a registry outage or "
            "rate limit keeps the pod from starting"
        )
        if policy == "Always":
            yield Problem.at(
                template.document,
                node.pos_of_value("imagePullPolicy"),
                f"imagePullPolicy: Always on {image}, {what}: {cost}",
                f"Pin a release tag or a digest in container `{container.name}` and set "
                "imagePullPolicy: IfNotPresent.",
            )
        elif policy is None and implies_always(image):
            untagged = ":" not in image.rpartition("/")[2]
            tagged = "no tag" if untagged else "the tag latest"
            yield Problem.at(
                template.document,
                node.pos_of_value("image"),
                f"{image} has {tagged} and no imagePullPolicy, which then defaults to "
                f"Always; it is {what}: {cost}",
                f"Pin a release tag or a digest in container `{container.name}` (the "
                "default is then IfNotPresent).",
            )


def invalid_image_reference(ctx: CheckContext) -> Iterator[Problem]:
    """A container of a GPU pod whose image the API server or the kubelet refuses to read."""
    for template, container, image in _gpu_pod_images(ctx):
        node = container.node
        # A template's value (`${IMAGE}`, `{{ .image }}`, `<your-image>`) is not judged.
        if any(mark in image for mark in "${}<>"):
            continue
        if image != image.strip():
            what = (
                "starts or ends with whitespace: the API server refuses the pod "
                "(`must not have leading or trailing whitespace`)"
            )
        else:
            problem = reference_problem(image)
            if problem is None:
                continue
            what = (
                f"{problem}: the pod is scheduled and holds its GPUs, but the kubelet never "
                "pulls the image (`InvalidImageName`) and the container never starts"
            )
        yield Problem.at(
            template.document,
            node.pos_of_value("image"),
            f"image `{_quoted(image)}` of container `{container.name}` {what}",
            "Write the reference as the registry shows it: `registry/path/name:tag`, the "
            "path in lowercase.",
        )


#: The most of an image reference a message quotes: a real one is far shorter.
_QUOTED_MAX = 200


def _quoted(image: str) -> str:
    """`image` as a message quotes it: escaped where it is not printable, cut at 200."""
    text = image if image.isprintable() else repr(image)[1:-1]
    return text if len(text) <= _QUOTED_MAX else text[: _QUOTED_MAX - 1] + "…"
