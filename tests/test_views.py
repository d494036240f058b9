"""frozen_view, frozen_record and NamedTuple: the classes of the typed views and records."""

from __future__ import annotations

import inspect
import pickle
import typing
from dataclasses import (
    FrozenInstanceError,
    asdict,
    astuple,
    dataclass,
    field,
    fields,
    is_dataclass,
    replace,
)
from functools import cached_property

import pytest

from gpulint.model import SourceFile
from gpulint.views import NamedTuple, frozen_record, frozen_view


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
    assert is_dataclass(Point) and Point.note == ""  # the default, not the Field, on the class
    point = Point(1, note="first")
    assert point == Point(1, 0, "second") and hash(point) == hash(Point(1, 0, "second"))
    assert point != Point(1, 2) and point != (1, 0)
    assert [f.name for f in fields(point)] == ["x", "y", "note"]
    assert replace(point, y=5) == Point(1, 5) and asdict(point) == {"x": 1, "y": 0, "note": "first"}
    assert repr(point) == "Point(x=1, y=0, note='first')"
    with pytest.raises(FrozenInstanceError):
        point.x = 2


def test_a_record_is_what_dataclass_makes_of_its_fields() -> None:
    @dataclass(frozen=True)
    class Made:
        """The same fields, by dataclass()."""

        x: int
        y: int = 0
        note: str = field(default="", compare=False)

    keys = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare")
    keys += ("metadata", "kw_only", "_field_type")
    shown = [[getattr(f, key) for key in keys] for f in fields(Point)]
    assert shown == [[getattr(f, key) for key in keys] for f in fields(Made)]
    assert astuple(Point(1, 2, "a")) == astuple(Made(1, 2, "a")) == (1, 2, "a")


def test_a_record_refuses_a_required_field_after_a_default() -> None:
    with pytest.raises(TypeError, match="field 'b' without a default follows one with"):

        @frozen_record
        class Wrong:
            a: int = 0
            b: int


class Shape(NamedTuple):
    """Two required fields, two defaults and a method."""

    name: str
    sides: int
    colour: str | None = None
    tags: tuple[str, ...] = ()

    def describe(self) -> str:
        """A method of the class body."""
        return f"{self.name}/{self.sides}"


class TypingShape(typing.NamedTuple):
    """Two required fields, two defaults and a method."""

    name: str
    sides: int
    colour: str | None = None
    tags: tuple[str, ...] = ()

    def describe(self) -> str:
        """A method of the class body."""
        return f"{self.name}/{self.sides}"


def _outcome(call: typing.Callable[[], object]) -> str:
    """What a call returns or raises, with the class's name left out."""
    try:
        return repr(call()).replace("TypingShape", "Shape")
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}".replace("TypingShape", "Shape")


@pytest.mark.parametrize(
    "use",
    [
        lambda c: c("square", 4),
        lambda c: c("square", 4, "red", ("a",)),
        lambda c: c(name="square", sides=4, tags=("b",)),
        lambda c: c("square", 4)._replace(sides=5, colour="blue"),
        lambda c: c("square", 4)._asdict(),
        lambda c: c._make(["tri", 3, None, ()]),
        lambda c: (c._fields, c._field_defaults, c.__match_args__, c.__doc__),
        lambda c: (c.__new__.__doc__, c.__new__.__defaults__, c.sides.__doc__),
        lambda c: list(inspect.signature(c).parameters),
        lambda c: c("square", 4).describe(),
        lambda c: (c("a", 1) == ("a", 1, None, ()), hash(c("a", 1)) == hash(("a", 1, None, ()))),
        lambda c: pickle.loads(pickle.dumps(c("p", 5, "green"))),
        lambda c: c(),
        lambda c: c("a", 1, "b", (), "extra"),
        lambda c: c("a", 1, colour=2, shade=3),
        lambda c: c("a", 1, name="b"),
        lambda c: c("a", 1)._replace(shade=3),
        lambda c: c._make(["a"]),
    ],
)
def test_named_tuple_is_typing_named_tuple(use: typing.Callable[[type], object]) -> None:
    assert _outcome(lambda: use(Shape)) == _outcome(lambda: use(TypingShape))


def test_named_tuple_is_a_plain_tuple_class() -> None:
    assert type(Shape) is type and Shape.__mro__ == (Shape, tuple, object)
    assert (Shape.__module__, Shape.__qualname__) == (__name__, "Shape")
    assert Shape.__annotations__["sides"] == "int"
    assert not hasattr(Shape("a", 1), "__dict__")


def test_named_tuple_of_more_fields_than_precompiled() -> None:
    names = [f"f{i}" for i in range(20)]
    body: dict[str, object] = {"__annotations__": dict.fromkeys(names, "int"), "f19": 0}
    Wide = type(NamedTuple)("Wide", (NamedTuple,), {"__module__": __name__, **body})
    wide = Wide(*range(19))
    assert tuple(wide) == (*range(19), 0) and wide.f18 == 18
    assert list(inspect.signature(Wide).parameters) == names


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"__annotations__": {"_hidden": "int"}}, ValueError),
        ({"__annotations__": {"a": "int", "b": "int"}, "a": 1}, TypeError),
        ({"__annotations__": {"a": "int"}, "_replace": None}, AttributeError),
    ],
)
def test_named_tuple_refuses_what_typing_refuses(body: dict[str, object], error: type) -> None:
    # An underscore field, a field without a default after one with, a reserved name.
    with pytest.raises(error):
        type(NamedTuple)("Bad", (NamedTuple,), {"__module__": __name__, **body})
