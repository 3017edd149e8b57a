"""Writes a graph that is one long chain of ops to stdout (deep-graphs.test).

    gen-chain.py neg N        N fuse.neg on a tensor<64xf32>
    gen-chain.py transpose N  N views between 4x8 and 8x4, alternately fuse.transpose and
                              fuse.reshape (adjacent transposes fold into one), then an exp
    gen-chain.py reshape N    an exp, then N fuse.reshape between 4x8 and 8x4
"""
import sys

kind, count = sys.argv[1], int(sys.argv[2])
shapes = ["4x8", "8x4"]
if kind == "neg":
    print("func.func @chain(%x0: tensor<64xf32>) -> tensor<64xf32> {")
    for i in range(1, count + 1):
        print(f"  %x{i} = fuse.neg %x{i - 1} : tensor<64xf32>")
    print(f"  return %x{count} : tensor<64xf32>")
elif kind == "reshape":
    last = shapes[count % 2]
    print(f"func.func @chain(%x: tensor<4x8xf32>) -> tensor<{last}xf32> {{")
    print("  %x0 = fuse.exp %x : tensor<4x8xf32>")
    for i in range(1, count + 1):
        a, b = shapes[(i - 1) % 2], shapes[i % 2]
        print(f"  %x{i} = fuse.reshape %x{i - 1} : (tensor<{a}xf32>) -> tensor<{b}xf32>")
    print(f"  return %x{count} : tensor<{last}xf32>")
else:
    last = shapes[count % 2]
    print(f"func.func @chain(%x0: tensor<4x8xf32>) -> tensor<{last}xf32> {{")
    for i in range(1, count + 1):
        a, b = shapes[(i - 1) % 2], shapes[i % 2]
        if i % 2:
            print(f"  %x{i} = fuse.transpose %x{i - 1}, permutation = [1, 0] :"
                  f" (tensor<{a}xf32>) -> tensor<{b}xf32>")
        else:
            print(f"  %x{i} = fuse.reshape %x{i - 1} : (tensor<{a}xf32>) -> tensor<{b}xf32>")
    print(f"  %y = fuse.exp %x{count} : tensor<{last}xf32>")
    print(f"  return %y : tensor<{last}xf32>")
print("}")
