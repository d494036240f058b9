"""frozen_view: the __init__, __repr__ and immutability of the typed views."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, asdict, field, fields, replace
from functools import cached_property

import pytest

from gpulint.model import SourceFile
from gpulint.views import frozen_record, frozen_view


@frozen_view
class Example:
    """Two required fields, a default and a default factory."""

    name: str
    size: int
    note: str | None = None
    tags: list[str] = field(default_factory=list)
    cache: dict[str, int] = field(default_factory=dict, repr=False)

    @cached_property
    def label(self) -> str:
        """Computed once."""
        return f"{self.name}:{self.size}"


def test_fields_by_position_keyword_and_default() -> None:
    example = Example("a", 1, tags=["x"])
    assert (example.name, example.size, example.note, example.tags) == ("a", 1, None, ["x"])
    assert Example("a", 1).tags == [] and Example("a", 1).tags is not Example("a", 1).tags
    assert repr(Example("a", 1)) == "Example(name='a', size=1, note=None, tags=[])"


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "Example() missing arguments: name, size"),
        (("a",), {}, "Example() missing arguments: size"),
        (("a", 1, "n", [], {}, 5), {}, "Example() takes at most 5 arguments, 6 given"),
        (("a", 1), {"name": "b"}, "Example() got a field both by position and by keyword"),
        (("a", 1), {"colour": "red"}, "Example() got unexpected keyword arguments: colour"),
    ],
)
def test_a_bad_call_is_a_type_error(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(TypeError) as raised:
        Example(*args, **kwargs)
    assert str(raised.value) == message


def test_immutable_but_cached_properties_work() -> None:
    example = Example("a", 1)
    with pytest.raises(FrozenInstanceError):
        example.size = 2
    with pytest.raises(FrozenInstanceError):
        del example.name
    assert example.label == "a:1" and example.__dict__["label"] == "a:1"


def test_equal_only_to_itself_and_picklable() -> None:
    file = SourceFile("a.yaml")
    assert file == file and file != SourceFile("a.yaml")
    copied = pickle.loads(pickle.dumps(file))
    assert (copied.path, copied.suppressions) == ("a.yaml", {})
    assert {file: 1}[file] == 1


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="field 'b' without a default follows one with"):

        @frozen_view
        class Wrong:
            a: int = 0
            b: int


@frozen_record
class Point:
    """A record callers replace: equal by its compared fields."""

    x: int
    y: int = 0
    note: str = field(default="", compare=False)


def test_a_record_is_a_dataclass_equal_by_its_compared_fields() -> None:
    point = Point(1, note="first")
    assert point == Point(1, 0, "second") and hash(point) == hash(Point(1, 0, "second"))
    assert point != Point(1, 2) and point != (1, 0)
    assert [f.name for f in fields(point)] == ["x", "y", "note"]
    assert replace(point, y=5) == Point(1, 5) and asdict(point) == {"x": 1, "y": 0, "note": "first"}
    assert repr(point) == "Point(x=1, y=0, note='first')"
    with pytest.raises(FrozenInstanceError):
        point.x = 2
