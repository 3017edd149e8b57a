"""Writes .npz archives built to break a reader, for hostile-npz.test.

    hostile_npz.py KIND OUT.npz
    hostile_npz.py peak-rss-under MIB COMMAND...

The second form runs COMMAND, passes its output through, prints whether its
peak resident memory stayed under MIB MiB and exits with its status.

Plain Python (zipfile, struct): no NumPy, so the archives are exactly what
is written here. The graph that reads them (Inputs/one-input.mlir) takes one
argument `x`, a 2x3xf32.

  bomb          x.npy declares (268435456,) f32 and inflates to 1 GiB of
                zeros from about 1 MiB of deflate
  duplicate     two members named x.npy
  alias         members x.npy and x, which both name array x
  short         x.npy's header promises 24 bytes of data, the member has 8
  long-header   x.npy's header length field says 4 GiB (format 2.0)
  inf           x holds +Inf at [0, 1] and -Inf at [1, 2]
  nan-and-inf   x holds NaN at [1, 0] and -Inf at [0, 0]
  fine          x holds 0..5, as it should
"""

import struct
import sys
import zipfile
import zlib


def npy_header(descr, shape, version=1):
    """The .npy preamble and header numpy writes for a C-ordered array."""
    shape_text = "(%s)" % "".join("%d, " % d for d in shape).rstrip(" ")
    if len(shape) == 1:
        shape_text = "(%d,)" % shape[0]
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    length_bytes = 2 if version == 1 else 4
    unpadded = 6 + 2 + length_bytes + len(text) + 1
    text += " " * (64 - unpadded % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text.encode("latin1")


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def write(path, members):
    """members: (name, bytes) pairs, stored in order."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 12, 0, 0)), data)


def write_bomb(path):
    """1 GiB of zero f32 data behind a header, deflated while it is made, so
    neither this script nor the archive ever holds it."""
    count = 1 << 28
    info = zipfile.ZipInfo("x.npy", (1980, 1, 1, 12, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "w") as archive:
        with archive.open(info, "w", force_zip64=True) as member:
            member.write(npy_header("<f4", (count,)))
            chunk = bytes(1 << 24)
            for _ in range(count * 4 // len(chunk)):
                member.write(chunk)


def peak_rss_under(limit_mib, command):
    import os
    import subprocess

    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    peak_mib = usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux
    print("peak RSS under %d MiB: %s (%.0f MiB)" %
          (limit_mib, "yes" if peak_mib < limit_mib else "no", peak_mib), flush=True)
    return child.returncode


def main():
    if sys.argv[1] == "peak-rss-under":
        sys.exit(peak_rss_under(int(sys.argv[2]), sys.argv[3:]))
    kind, path = sys.argv[1], sys.argv[2]
    inf, nan = float("inf"), float("nan")
    header = npy_header("<f4", (2, 3))
    if kind == "bomb":
        write_bomb(path)
    elif kind == "duplicate":
        import warnings

        warnings.simplefilter("ignore")  # zipfile warns of the duplicate
        write(path, [("x.npy", header + f32([0] * 6)), ("x.npy", header + f32([1] * 6))])
    elif kind == "alias":
        write(path, [("x.npy", header + f32([0] * 6)), ("x", header + f32([1] * 6))])
    elif kind == "short":
        write(path, [("x.npy", header + f32([0] * 2))])
    elif kind == "long-header":
        write(path, [("x.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFFF) + b"{")])
    elif kind == "inf":
        write(path, [("x.npy", header + f32([0, inf, 2, 3, 4, -inf]))])
    elif kind == "nan-and-inf":
        write(path, [("x.npy", header + f32([-inf, 1, 2, nan, 4, 5]))])
    elif kind == "fine":
        write(path, [("x.npy", header + f32([0, 1, 2, 3, 4, 5]))])
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
