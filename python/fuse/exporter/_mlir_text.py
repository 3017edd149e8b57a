"""Writing `fuse` dialect text: tensor types, constants, SSA values, op lines.

The exporter builds one `func.func` as a list of op lines in custom assembly
form. Every op is pure, so ops whose results end up unused (a transpose folded
into a matmul flag, the loss of a pattern that was rewritten) are dropped at
the end by a backward sweep rather than avoided up front. Each op carries a
location alias (`loc(#locN)`) that names the FX node and the model source line
it came from; the aliases are written after the module, as MLIR prints them.
"""

import math
import re
import struct

import numpy as np

FLOAT_TYPES = ("f32", "f16", "bf16")
INT_TYPES = ("i64", "i32")


class TensorType:
    """A static tensor type: shape (tuple of ints) and element type string."""

    __slots__ = ("shape", "element")

    def __init__(self, shape, element):
        self.shape = tuple(int(d) for d in shape)
        self.element = element

    @property
    def rank(self):
        return len(self.shape)

    @property
    def numel(self):
        return math.prod(self.shape)

    @property
    def is_float(self):
        return self.element in FLOAT_TYPES

    def with_element(self, element):
        return TensorType(self.shape, element)

    def with_shape(self, shape):
        return TensorType(shape, self.element)

    def __eq__(self, other):
        return (isinstance(other, TensorType) and self.shape == other.shape
                and self.element == other.element)

    def __hash__(self):
        return hash((self.shape, self.element))

    def __str__(self):
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.element}>"

    __repr__ = __str__


class Value:
    """An SSA value of the function being built."""

    __slots__ = ("name", "type", "transpose_of", "permutation_of")

    def __init__(self, name, type_):
        self.name = name
        self.type = type_
        # Set when this value is a transpose of another's last two dimensions,
        # so that a matmul can take the source with a transpose flag instead.
        self.transpose_of = None
        # (source, permutation) when this value is a fuse.transpose of source,
        # so that transposes of transposes compose into one.
        self.permutation_of = None

    @property
    def shape(self):
        return self.type.shape

    @property
    def element(self):
        return self.type.element

    def __str__(self):
        return self.name

    __repr__ = __str__


def format_float(value):
    """A float as MLIR writes an f64 attribute (round-trips exactly)."""
    value = float(value)
    if math.isnan(value):
        return "0x7FF8000000000000"
    if math.isinf(value):
        return "0x7FF0000000000000" if value > 0 else "0xFFF0000000000000"
    text = repr(value)
    if "e" not in text and "." not in text:
        text += ".0"
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def format_element(value, element):
    """One element of a dense attribute of `element` type."""
    if element == "i1":
        return "true" if bool(value) else "false"
    if element in INT_TYPES:
        return str(int(value))
    value = float(value)
    if math.isfinite(value):
        return format_float(value)
    # Non-finite floats are written as the element type's bit pattern.
    bits = {
        "f32": lambda v: struct.unpack("<I", struct.pack("<f", v))[0],
        "f16": lambda v: int(np.array(v, dtype=np.float16).view(np.uint16)),
        "bf16": lambda v: struct.unpack("<I", struct.pack("<f", v))[0] >> 16,
    }[element](value)
    width = {"f32": 8, "f16": 4, "bf16": 4}[element]
    return f"0x{bits:0{width}X}"


def dense_attr(array, element):
    """`dense<...>` for a NumPy array whose values have `element` type: a splat
    when every element is equal, hex raw data for large arrays, else a nested
    literal."""
    flat = array.reshape(-1)
    if flat.size == 0:
        return "dense<>"
    first = flat[0]
    if _all_equal(flat, first) or (np.issubdtype(flat.dtype, np.floating) and _all_nan(flat)):
        return f"dense<{format_element(first, element)}>"
    # MLIR packs i1 hex data into bits; booleans are written as literals,
    # formatted a whole array at a time (a 1024 x 1024 causal mask element
    # by element took 1.8 s).
    if flat.size > 64 and element != "i1":
        return f'dense<"0x{_raw_hex(flat, element)}">'
    if element == "i1":
        return f"dense<{_nested_words(array.shape, np.where(flat, 'true', 'false').tolist())}>"
    return f"dense<{_nested(array, element)}>"


# How many leading elements are compared before the whole array: a large
# constant that is not a splat almost always shows it in its first few.
_PREFIX = 64


def _all_equal(flat, first):
    return bool(np.all(flat[:_PREFIX] == first)) and bool(np.all(flat == first))


def _all_nan(flat):
    return bool(np.all(np.isnan(flat[:_PREFIX]))) and bool(np.all(np.isnan(flat)))


def _raw_hex(flat, element):
    """The elements' little-endian bytes in upper-case hex. The array is
    converted (and made contiguous) only where it is not already so, and
    hex-encoded through a memoryview: a 150 MB weight is copied no more
    than it must be."""
    if element == "bf16":
        bits = np.asarray(flat, dtype=np.float32).view(np.uint32)
        # Round to nearest even, as the interpreter stores bf16.
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        data = np.ascontiguousarray(rounded, dtype="<u2")
    else:
        numpy_type = {"f32": "<f4", "f16": "<f2", "i64": "<i8", "i32": "<i4", "i1": "u1"}[element]
        data = np.ascontiguousarray(flat, dtype=numpy_type)
    return memoryview(data).cast("B").hex().upper()


def _nested_words(shape, words):
    """The nested literal of an array of `shape` whose elements, in order,
    are `words` (strings): joined row by row, then dimension by dimension."""
    if not shape:
        return words[0]
    rows = words  # no dimension is 0: dense_attr writes an empty array as dense<>
    for size in reversed(shape):
        rows = ["[" + ", ".join(rows[i:i + size]) + "]" for i in range(0, len(rows), size)]
    return rows[0]


def _nested(array, element):
    if array.ndim == 0:
        return format_element(array.item(), element)
    return "[" + ", ".join(_nested(sub, element) for sub in array) + "]"


def int_list(values):
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def string_literal(text):
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


_BARE_ID = re.compile(r"[^A-Za-z0-9_$.]")


class Op:
    """One op line: its results, the values it uses and its text, written with
    `{}` fields that the results' and operands' names fill in; or, for an op
    with no operands (a constant), a tuple of text pieces written as they
    are, so that a constant of hundreds of megabytes is never formatted or
    copied on its way into the function's text."""

    __slots__ = ("results", "operands", "text", "loc")

    def __init__(self, results, operands, text, loc):
        self.results = results
        self.operands = operands
        self.text = text
        self.loc = loc


class FunctionBuilder:
    """Collects the arguments, ops and results of one function."""

    def __init__(self, name):
        self.name = name
        self.arguments = []   # (Value, {attr: text})
        self.results = []     # (Value, {attr: text})
        self.ops = []
        self._names = set()
        self._locations = {}  # location text -> alias number

    def fresh_name(self, hint):
        base = "%" + (_BARE_ID.sub("_", hint) or "v")
        if base[1].isdigit():
            base = "%v" + base[1:]
        name, counter = base, 0
        while name in self._names:
            counter += 1
            name = f"{base}_{counter}"
        self._names.add(name)
        return name

    def add_argument(self, hint, type_, attributes):
        value = Value(self.fresh_name(hint), type_)
        self.arguments.append((value, attributes))
        return value

    def location(self, text):
        """The alias number of a location (`loc(...)` body)."""
        if text not in self._locations:
            self._locations[text] = len(self._locations)
        return self._locations[text]

    def emit(self, text, operands, result_types, hint, loc):
        """Appends an op. `text` has `{r0}`, `{r1}`... for results and `{0}`,
        `{1}`... for operands, or is a tuple of literal pieces (no operands);
        returns the result Values."""
        results = [Value(self.fresh_name(hint), t) for t in result_types]
        self.ops.append(Op(results, list(operands), text, loc))
        return results

    def _live_ops(self):
        used = {id(value) for value, _ in self.results}
        live = []
        for op in reversed(self.ops):
            if any(id(r) in used for r in op.results):
                live.append(op)
                used.update(id(v) for v in op.operands)
        live.reverse()
        return live, used

    def render(self, module_comment=None):
        live, used = self._live_ops()
        # The text is collected as pieces and joined once at the end.
        parts = []
        if module_comment:
            for line in module_comment.splitlines():
                parts += ["// " + line if line else "//", "\n"]
        args = []
        for value, attributes in self.arguments:
            attr_text = ", ".join(f"{k} = {v}" for k, v in attributes.items())
            args.append(f"    {value.name}: {value.type}" + (f" {{{attr_text}}}" if attr_text else ""))
        result_decls = []
        for value, attributes in self.results:
            attr_text = ", ".join(f"{k} = {v}" for k, v in attributes.items())
            result_decls.append(f"{value.type}" + (f" {{{attr_text}}}" if attr_text else ""))
        parts += [f"func.func @{self.name}(\n" + ",\n".join(args) + ")\n    -> ("
                  + ",\n        ".join(result_decls) + ") {", "\n"]
        append, extend = parts.append, parts.extend
        for op in live:
            append(f"  {', '.join(r.name for r in op.results)} = " if op.results else "  ")
            if isinstance(op.text, tuple):
                extend(op.text)
            else:
                fields = {f"r{i}": r.name for i, r in enumerate(op.results)}
                append(op.text.format(*[v.name for v in op.operands], **fields))
            append(f" loc(#loc{op.loc})\n" if op.loc is not None else "\n")
        names = ", ".join(v.name for v, _ in self.results)
        types = ", ".join(str(v.type) for v, _ in self.results)
        parts += [f"  return {names} : {types}" if self.results else "  return", "\n}\n"]
        used_locs = {op.loc for op in live if op.loc is not None}
        for text, number in self._locations.items():
            if number in used_locs:
                parts.append(f"#loc{number} = loc({text})\n")
        return "".join(parts)
