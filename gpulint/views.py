"""Frozen view and record classes that cost a tenth of a frozen dataclass to define.

`dataclass(frozen=True)` compiles the source of four to six methods for every class it
decorates (3.5 to 4.5 million instructions each time gpulint starts, more than the class's own
code). `frozen_view` (the typed views: documents, containers, pod templates, workloads) and
`frozen_record` (records callers `dataclasses.replace`) build the same `__init__`, `__repr__`,
immutability and, for records, equality and hashing from shared functions, without compiling
anything. A record is a dataclass by its table of fields, made without calling `dataclass()`
either, which looks into every field's annotation (300,000 to 1,200,000 instructions a class).

`NamedTuple` is `typing.NamedTuple` for the class syntax (`class Taint(NamedTuple): ...`), and
makes the same class: a tuple subclass with the same fields, defaults, `__new__` signature and
errors, `_make`, `_replace`, `_asdict`, repr and pickling. `typing.NamedTuple` checks every
field's type and compiles `__new__` from source (collections.namedtuple's `eval`): about 700,000
instructions a class, for the 80 classes a run with a profile defines as it starts. This one
checks no type and compiles nothing: `__new__` is a lambda of as many fields compiled with this
module, given the field names. Type checkers see `typing.NamedTuple`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import _FIELD, MISSING, Field, FrozenInstanceError, field  # type: ignore[attr-defined]
from operator import attrgetter, itemgetter
from types import FunctionType
from typing import TYPE_CHECKING, Any, TypeVar

try:
    from _collections import _tuplegetter  # what collections.namedtuple uses
except ImportError:  # not CPython

    def _tuplegetter(index: int, doc: str) -> Any:
        return property(itemgetter(index), doc=doc)


_View = TypeVar("_View", bound=type)


def frozen_view(cls: _View) -> _View:
    """Give `cls` an `__init__` over its annotated fields (in order; a plain default or a
    `field(default=...)` / `field(default_factory=...)` makes a field optional), a `__repr__`
    of them (but those of `field(repr=False)`), and instances whose attributes cannot be
    assigned or deleted.

    Equality and hashing stay those of `object` (identity), as `dataclass(eq=False)` leaves
    them. `functools.cached_property` works: it writes to the instance's `__dict__`.
    """
    names: tuple[str, ...] = tuple(inspect.get_annotations(cls))
    defaults: dict[str, Any] = {}
    factories: dict[str, Callable[[], Any]] = {}
    hidden: set[str] = set()  # field(repr=False)
    for name in names:
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, Field):
            if not value.repr:
                hidden.add(name)
            if value.default_factory is not MISSING:
                factories[name] = value.default_factory
                delattr(cls, name)
            else:
                defaults[name] = value.default
                setattr(cls, name, value.default)
        elif value is not MISSING:
            defaults[name] = value
        elif defaults or factories:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with")
    return _install(cls, names, defaults, factories, tuple(n for n in names if n not in hidden))


def frozen_record(cls: _View) -> _View:
    """Make `cls` a frozen dataclass that equals another of its class with equal fields (but
    those of `field(compare=False)`) and hashes alike, as `dataclass(frozen=True)` does, without
    compiling any method: `dataclasses.fields`, `replace` and `asdict` work on it.

    For records callers `dataclasses.replace`: the config, the library's options and results,
    the profile's pools. Its fields are its own annotations (no base class gives it fields).
    """
    record: dict[str, Field[Any]] = {}
    optional = False  # a field with a default came before
    for name, annotation in inspect.get_annotations(cls).items():
        value = cls.__dict__.get(name, MISSING)
        spec = value if isinstance(value, Field) else field(default=value)
        required = spec.default is MISSING and spec.default_factory is MISSING
        if required and optional:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with")
        optional = not required
        # As dataclass() completes a field; the mark is what fields() lists (not a ClassVar).
        spec.name, spec.type, spec.kw_only = name, annotation, False
        spec._field_type = _FIELD  # type: ignore[attr-defined]
        record[name] = spec
    cls.__dataclass_fields__ = record  # type: ignore[attr-defined]
    specs = tuple(record.values())
    defaults = {f.name: f.default for f in specs if f.default is not MISSING}
    factories = {f.name: f.default_factory for f in specs if f.default_factory is not MISSING}
    for name in factories:
        delattr(cls, name)
    for name, default in defaults.items():
        setattr(cls, name, default)
    _install(cls, tuple(record), defaults, factories, tuple(f.name for f in specs if f.repr))
    compared = attrgetter(*(f.name for f in specs if f.compare))
    hashed = attrgetter(*(f.name for f in specs if (f.compare if f.hash is None else f.hash)))

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)  # type: ignore[no-any-return]
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    cls.__eq__ = __eq__  # type: ignore[method-assign,assignment]
    cls.__hash__ = __hash__  # type: ignore[method-assign,assignment]
    return cls


def _install(
    cls: _View,
    names: tuple[str, ...],
    defaults: dict[str, Any],
    factories: dict[str, Callable[[], Any]],
    shown_names: tuple[str, ...],
) -> _View:
    """Give `cls` the `__init__`, `__repr__` and immutability of a frozen record of `names`."""
    known = frozenset(names)
    count = len(names)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # The common call gives every field once: two dict updates and no loop.
        state = self.__dict__
        state.update(zip(names, args, strict=False))
        if kwargs:
            if not known.issuperset(kwargs):
                unknown = ", ".join(sorted(set(kwargs) - known))
                raise TypeError(f"{cls.__name__}() got unexpected keyword arguments: {unknown}")
            state.update(kwargs)
        if len(args) + len(kwargs) != count or len(state) != count:
            _complete(cls.__name__, state, len(args) + len(kwargs), names, defaults, factories)

    def __repr__(self: Any) -> str:
        state = self.__dict__
        shown = ", ".join(f"{name}={state[name]!r}" for name in shown_names)
        return f"{type(self).__qualname__}({shown})"

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    cls.__init__ = __init__  # type: ignore[misc]
    cls.__repr__ = __repr__  # type: ignore[assignment]
    cls.__setattr__ = _frozen_setattr  # type: ignore[assignment]
    cls.__delattr__ = _frozen_delattr  # type: ignore[assignment]
    cls.__match_args__ = names  # type: ignore[attr-defined]
    return cls


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _complete(
    name: str,
    state: dict[str, Any],
    given: int,
    names: tuple[str, ...],
    defaults: dict[str, Any],
    factories: dict[str, Callable[[], Any]],
) -> None:
    """Fill the defaults of the fields a call left out, or raise the TypeError of a bad call."""
    if given > len(names):
        raise TypeError(f"{name}() takes at most {len(names)} arguments, {given} given")
    if len(state) < given:
        raise TypeError(f"{name}() got a field both by position and by keyword")
    for field_name, default in defaults.items():
        state.setdefault(field_name, default)
    for field_name, factory in factories.items():
        if field_name not in state:
            state[field_name] = factory()
    if len(state) < len(names):
        missing = ", ".join(n for n in names if n not in state)
        raise TypeError(f"{name}() missing arguments: {missing}")


# --- NamedTuple --------------------------------------------------------------------------------

_tuple_new = tuple.__new__
# `__new__` of a class of N fields (index N), as collections.namedtuple compiles it for each
# class: the parameters are renamed to the fields, the code is the same.
_NEW_OF_ARITY: tuple[Callable[..., Any], ...] = (
    lambda _cls: _tuple_new(_cls, ()),
    lambda _cls, _0: _tuple_new(_cls, (_0,)),
    lambda _cls, _0, _1: _tuple_new(_cls, (_0, _1)),
    lambda _cls, _0, _1, _2: _tuple_new(_cls, (_0, _1, _2)),
    lambda _cls, _0, _1, _2, _3: _tuple_new(_cls, (_0, _1, _2, _3)),
    lambda _cls, _0, _1, _2, _3, _4: _tuple_new(_cls, (_0, _1, _2, _3, _4)),
    lambda _cls, _0, _1, _2, _3, _4, _5: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7: _tuple_new(_cls, (_0, _1, _2, _3, _4, _5, _6, _7)),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8)
    ),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9)
    ),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10)
    ),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11)
    ),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12)
    ),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13)
    ),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14)
    ),
    lambda _cls, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15: _tuple_new(
        _cls, (_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15)
    ),
)
# What collections.namedtuple forbids a class body to define.
_RESERVED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults"}
    | {"_make", "_replace", "_asdict", "_source"}
)


#: The globals of every `__new__` made here (shared: they only read `_tuple_new`).
_NEW_GLOBALS = {"_tuple_new": _tuple_new, "__builtins__": {}}


def _new_function(
    typename: str, names: tuple[str, ...], defaults: tuple[Any, ...] | None = None
) -> Callable[..., Any]:
    """`__new__(_cls, *names)` returning the tuple of its arguments, as a `typename`, named
    `typename.__new__`, with `defaults` for its last parameters."""
    if len(names) < len(_NEW_OF_ARITY):
        template = _NEW_OF_ARITY[len(names)].__code__
        code = template.replace(
            co_varnames=("_cls", *names), co_name="__new__", co_qualname=f"{typename}.__new__"
        )
        return FunctionType(code, _NEW_GLOBALS, None, defaults)
    # More fields than the lambdas above take: compiled, as collections.namedtuple does.
    arguments = ", ".join(names)
    source = f"lambda _cls, {arguments}: _tuple_new(_cls, ({arguments},))"
    built: Callable[..., Any] = eval(source, dict(_NEW_GLOBALS))
    built.__name__ = "__new__"
    built.__qualname__ = f"{typename}.__new__"
    built.__defaults__ = defaults
    return built


def _asdict(self: tuple[Any, ...]) -> dict[str, Any]:
    """Return a new dict which maps field names to their values."""
    return dict(zip(self._fields, self, strict=False))  # type: ignore[attr-defined]


def _getnewargs(self: tuple[Any, ...]) -> tuple[Any, ...]:
    """Return self as a plain tuple.  Used by copy and pickle."""
    return tuple(self)


def _replace(self: Any, /, **changes: Any) -> Any:
    """Return a new object of this class replacing the given fields with new values."""
    result = self._make(map(changes.pop, self._fields, self))
    if changes:
        raise ValueError(f"Got unexpected field names: {list(changes)!r}")
    return result


def _make(cls: type, iterable: Any) -> Any:
    """Make a new object of this class from a sequence or iterable."""
    result = _tuple_new(cls, iterable)
    if len(result) != len(cls._fields):  # type: ignore[attr-defined]
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")  # type: ignore[attr-defined]
    return result


def _repr(self: Any) -> str:
    """Return a nicely formatted representation string."""
    shown = ", ".join([f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True)])
    return f"{self.__class__.__name__}({shown})"


# The methods every class shares, as namedtuple's own closures do the same for each class.
_SHARED = {
    "__slots__": (),
    "_make": classmethod(_make),
    "_replace": _replace,
    "__repr__": _repr,
    "_asdict": _asdict,
    "__getnewargs__": _getnewargs,
}


class _NamedTupleMeta(type):
    """Builds the class of a `class X(NamedTuple)` statement (see the module's docstring)."""

    def __new__(cls, typename: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        # Every start defines a hundred of these classes: the checks are set operations and
        # the field getters are shared, rather than loops and a getter made per field.
        if bases != (_NamedTupleBase,):
            raise TypeError("can only inherit from a NamedTuple type")
        names = tuple(namespace.get("__annotations__", ()))
        required = len(names) - len(namespace.keys() & names)
        if not namespace.keys().isdisjoint(names[:required]):
            raise TypeError(f"{typename}: a field without a default follows one with a default")
        if "_" in {name[:1] for name in names}:
            raise ValueError(f"{typename}: field names cannot start with an underscore")
        if not _RESERVED.isdisjoint(namespace):
            raise AttributeError(f"{typename}: cannot overwrite NamedTuple attributes")
        optional = names[required:]
        defaults = tuple([namespace[name] for name in optional])
        arguments = ", ".join(names) + ("," if len(names) == 1 else "")
        new = _new_function(typename, names, defaults or None)
        new.__doc__ = f"Create new instance of {typename}({arguments})"
        own = dict(namespace)  # the class body's methods, docstring, ..., less the defaults
        for name in optional:
            del own[name]
        body = {
            **_SHARED,
            "__doc__": f"{typename}({arguments})",
            "_fields": names,
            "_field_defaults": dict(zip(optional, defaults, strict=True)),
            "__new__": new,
            "__match_args__": names,
            **dict(zip(names, _getters(len(names)), strict=True)),
            **own,
        }
        return type(typename, (tuple,), body)


#: The getter of each field index, shared by every class (as namedtuple's are alike).
_GETTERS: list[Any] = []


def _getters(count: int) -> list[Any]:
    """The getters of fields 0 to `count` - 1."""
    while len(_GETTERS) < count:
        index = len(_GETTERS)
        _GETTERS.append(_tuplegetter(index, f"Alias for field number {index}"))
    return _GETTERS[:count]


if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    _NamedTupleBase = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
    NamedTuple = _NamedTupleBase
