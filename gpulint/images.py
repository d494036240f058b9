"""Container image references: `registry/path/name:tag@digest`, split into their parts."""

from __future__ import annotations

from gpulint.views import NamedTuple


class ImageRef(NamedTuple):
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


# The reference grammar the kubelet parses an image with before pulling it (the `reference`
# package of distribution, which `ParseNormalizedNamed` applies): an optional registry host
# (any case, a port), lowercase path components joined by `.`, `_`, `__` or dashes, an
# optional tag of up to 128 word characters, dots and dashes, an optional digest.
_ALNUM = r"[a-z0-9]+"
_PATH_COMPONENT = rf"{_ALNUM}(?:(?:[._]|__|-+){_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_REFERENCE = (
    rf"(?:{_HOST}(?::[0-9]+)?/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
    r"(?::[\w][\w.-]{0,127})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?\Z"
)
#: The longest repository name (registry and path) the grammar allows.
_NAME_MAX = 255
#: A name of 64 hex digits alone is refused: it reads as an image ID.
_IMAGE_ID = r"[a-f0-9]{64}\Z"


def reference_problem(image: str) -> str | None:
    """Why the kubelet cannot parse `image` as an image reference (it then never pulls it:
    `InvalidImageName`), completing "the image ..."; None when it can."""
    if not image or _plainly_valid(image):
        return None  # an empty one is left to the API's own validation
    import re

    if re.match(_REFERENCE, image) is None:
        if image.lower() != image and re.match(_REFERENCE, _lower_path(image)):
            return "names its repository in capitals, which a reference may not"
        if any(c.isspace() for c in image):
            return "holds whitespace, which no reference may"
        return "is not a reference of the form `registry/path:tag` or `path@digest`"
    name = image.partition("@")[0]
    last = name.rpartition("/")[2]
    if ":" in last:
        name = name[: len(name) - len(last) + last.index(":")]
    if len(name) > _NAME_MAX:
        return f"has a repository name of {len(name)} characters, more than {_NAME_MAX}"
    if re.match(_IMAGE_ID, image):
        return "is 64 hexadecimal digits, which reads as an image ID, not a name"
    algorithm, _, hex_digits = image.partition("@")[2].partition(":")
    if not algorithm:
        return None
    wanted = _DIGEST_LENGTHS.get(algorithm)
    if wanted is None:
        return f"has a digest of algorithm `{algorithm}`, not sha256, sha384 or sha512"
    if len(hex_digits) != wanted or re.fullmatch("[a-f0-9]+", hex_digits) is None:
        return f"has a {algorithm} digest that is not {wanted} lowercase hex digits"
    return None


#: The hex digits of a digest of each algorithm the kubelet checks.
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}


def _lower_path(image: str) -> str:
    """`image` with its path lowercased, its registry host (which may hold capitals) as is."""
    head, slash, rest = image.partition("/")
    if slash and ("." in head or ":" in head or head == "localhost" or head.lower() != head):
        return f"{head}/{rest.lower()}"
    return image.lower()


#: Two separators side by side that the grammar never allows in a path component (it allows
#: one `.` or `_`, two `_`, or a run of `-`, each between letters or digits).
_BAD_SEPARATORS = ("..", "._", "_.", ".-", "-.", "_-", "-_", "___")


def _plainly_valid(image: str) -> bool:
    """Whether `image` is surely a valid reference, by string tests alone: the shapes images
    almost always have (`registry:5000/lower/case:Tag_1.0`), without compiling the grammar.
    False means "look closer", not "invalid"."""
    rest, at, _ = image.partition("@")
    head, slash, last = rest.rpartition("/")
    name, colon, tag = last.partition(":")
    if at or not image.isascii() or (len(image) == 64 and image.isalnum()):
        return False
    if colon and not (
        0 < len(tag) <= 128 and (tag[0].isalnum() or tag[0] == "_") and _alnum_without(tag, "._-")
    ):
        return False
    path = f"{head}{slash}{name}"
    components = path.split("/")
    first = components[0]
    if len(components) > 1 and ("." in first or ":" in first or first == "localhost"):
        host, colon, port = components.pop(0).partition(":")
        if colon and not port.isdigit():
            return False
        if not all(
            p and p[0].isalnum() and p[-1].isalnum() and _alnum_without(p, "-")
            for p in host.split(".")
        ):
            return False
    for component in components:
        if not (
            component
            and component[0].isalnum()
            and component[-1].isalnum()
            and component.lower() == component
            and _alnum_without(component, "._-")
            and not any(pair in component for pair in _BAD_SEPARATORS)
        ):
            return False
    return len(path) <= _NAME_MAX


def _alnum_without(text: str, marks: str) -> bool:
    """Whether `text` is letters and digits once `marks` are taken out (or only marks)."""
    for mark in marks:
        text = text.replace(mark, "")
    return not text or text.isalnum()
