#!/usr/bin/env python3
"""The .npz files of auto-mixed-precision-loss-scaling.test.

usage:
  auto_mixed_precision_npz.py step-inputs DIR
      DIR/step.npz: inputs of Inputs/auto-mixed-precision-step.mlir (fixed
      seed, lr 1, so that an update moves the weights visibly);
      DIR/huge.npz: the same with x times 1000, whose scaled gradient
      overflows f16 in the backward matmul at a loss scale of 65536.
  auto_mixed_precision_npz.py with-scale IN.npz OUT.npz SCALE TRACKER
      OUT = IN plus `loss_scale` and `loss_scale.growth_tracker`.
  auto_mixed_precision_npz.py expect REF.npz OUT.npz SCALE TRACKER FOUND_INF
      OUT = the outputs REF of the f32 step plus the scaler's state an f16
      step should return: `loss_scale`, `loss_scale.growth_tracker` and
      `found_inf`.
  auto_mixed_precision_npz.py same A.npz B.npz NAME...
      Prints, per NAME, whether A[NAME] and B[NAME] are bit for bit equal.
"""

import sys

import numpy as np


def scaler_state(scale, tracker):
    return {
        "loss_scale": np.float32(scale),
        "loss_scale.growth_tracker": np.float32(tracker),
    }


def main(argv):
    command, args = argv[1], argv[2:]
    if command == "step-inputs":
        (directory,) = args
        rng = np.random.default_rng(2024)
        step = {
            "x": rng.standard_normal((4, 8)).astype(np.float32),
            "w": rng.standard_normal((8, 3)).astype(np.float32),
            "b": rng.standard_normal(3).astype(np.float32),
            "labels": np.array([0, 2, 1, 2], dtype=np.int64),
            "lr": np.float32(1.0),
        }
        np.savez(f"{directory}/step.npz", **step)
        np.savez(f"{directory}/huge.npz", **dict(step, x=step["x"] * 1000))
    elif command == "with-scale":
        source, target, scale, tracker = args
        arrays = dict(np.load(source))
        arrays.update(scaler_state(float(scale), float(tracker)))
        np.savez(target, **arrays)
    elif command == "expect":
        reference, target, scale, tracker, found_inf = args
        arrays = dict(np.load(reference))
        arrays.update(scaler_state(float(scale), float(tracker)))
        arrays["found_inf"] = np.bool_(int(found_inf))
        np.savez(target, **arrays)
    elif command == "same":
        first, second, names = np.load(args[0]), np.load(args[1]), args[2:]
        for name in names:
            a, b = first[name], second[name]
            if np.array_equal(a, b):
                print(f"{name}: identical")
            else:
                print(f"{name}: differs by up to {np.max(np.abs(a - b)):.3g}")
    else:
        sys.exit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv)
