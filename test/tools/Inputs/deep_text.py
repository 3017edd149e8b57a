"""Writes graph text built to overflow MLIR's parser, for deep-nesting.test.

    deep_text.py KIND DEPTH OUT.mlir

  dense     fuse.constant dense<[[[...1.0...]]]> nested DEPTH brackets deep
  tuple     an argument of type tuple<tuple<...f32...>> DEPTH deep
  fusion    DEPTH fuse.fusion regions, each inside the one before
  alias     DEPTH type aliases, each a tuple of the one before (no bracket
            nests deeper than 2 in the text)
  laughs    DEPTH type aliases, each a tuple of the one before twice (the
            text grows linearly, the type it stands for doubles each time)
  affine    an affine_map of DEPTH added terms (no brackets at all)
"""

import sys


def main():
    kind, depth, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if kind == "dense":
        text = ("func.func @f() -> tensor<1xf32> {\n"
                "  %c = fuse.constant dense<" + "[" * depth + "1.0" + "]" * depth +
                "> : tensor<1xf32>\n  return %c : tensor<1xf32>\n}\n")
    elif kind == "tuple":
        text = ("func.func @f(%x: " + "tuple<" * depth + "f32" + ">" * depth +
                ") {\n  return\n}\n")
    elif kind == "fusion":
        lines = ["func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {"]
        for i in range(depth):
            lines.append("%%y%d = fuse.fusion loop (%%x) : (tensor<4xf32>) -> tensor<4xf32> {" % i)
            lines.append("^bb0(%%a%d: tensor<4xf32>):" % i)
        lines.append("fuse.yield %%a%d : tensor<4xf32>" % (depth - 1))
        for i in reversed(range(depth)):
            lines.append("}")
            if i > 0:
                lines.append("fuse.yield %%y%d : tensor<4xf32>" % i)
        lines += ["return %y0 : tensor<4xf32>", "}"]
        text = "\n".join(lines) + "\n"
    elif kind in ("alias", "laughs"):
        twice = kind == "laughs"
        lines = ["!t0 = tuple<f32>"]
        for i in range(1, depth):
            inner = "!t%d" % (i - 1)
            lines.append("!t%d = tuple<%s>" % (i, inner + ", " + inner if twice else inner))
        lines.append("func.func @f(%%x: !t%d) {\n  return\n}" % (depth - 1))
        text = "\n".join(lines) + "\n"
    elif kind == "affine":
        text = ("func.func @f() attributes {m = affine_map<(d0) -> (" +
                " + ".join(["d0"] * depth) + ")>} {\n  return\n}\n")
    else:
        sys.exit("unknown kind " + kind)
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
