#!/usr/bin/env python3
"""Regenerates the .npy/.npz fixtures that NpyTest.cpp reads.

Needs numpy (Debian: apt-get install python3-numpy; run with /usr/bin/python3).
The tests do not run this: the fixtures are committed so that the tests need
no Python. Run it from this directory.
"""
import zipfile

import numpy as np
from numpy.lib import format as npformat

# f32 with values that are not exactly representable in bf16/f16.
f32 = np.array([[0.0, -1.5, 3.14159274], [1e-3, -2.5e38, 7.0]], dtype=np.float32)
np.save("f32_2x3.npy", f32)

# f16 edge values: max, smallest subnormal, -0, inf.
f16 = np.array([65504.0, 2.0**-24, -0.0, np.inf, 1.0 / 3.0], dtype=np.float16)
np.save("f16_5.npy", f16)

# bf16 as ml_dtypes saves it: two bytes of void, the little-endian bit pattern.
bf16_bits = np.array([[0x3F80, 0xC049], [0x7F80, 0x0001]], dtype=np.uint16)
np.save("bf16_2x2.npy", bf16_bits.view(np.dtype("V2")))

np.save("i64_scalar.npy", np.array(-7, dtype=np.int64))
np.save("i32_4.npy", np.array([1, -2, 2**31 - 1, -2**31], dtype=np.int32))
np.save("bool_2x2.npy", np.array([[True, False], [False, True]]))
np.save("f32_0x3.npy", np.zeros((0, 3), dtype=np.float32))

# Other header versions.
with open("f32_v2.npy", "wb") as f:
    npformat.write_array(f, np.array([1.0, 2.0], dtype=np.float32), version=(2, 0))
with open("i32_v3.npy", "wb") as f:
    npformat.write_array(f, np.array([[5, 6]], dtype=np.int32), version=(3, 0))

# Archives, stored and deflated, in keyword order.
np.savez("savez.npz", weights=f32, ids=np.array([3, 1, 2], dtype=np.int64),
         mask=np.array([True, False]))
np.savez_compressed("savez_compressed.npz", x=np.arange(100, dtype=np.float32),
                    y=np.array(9, dtype=np.int32))

# Files the reader must reject.
np.save("f64.npy", np.array([1.0], dtype=np.float64))
np.save("u8.npy", np.array([1], dtype=np.uint8))
np.save("object.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
np.save("big_endian.npy", np.array([1.0, 2.0], dtype=">f4"))
np.save("fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
with zipfile.ZipFile("bad_member.npz", "w") as z:
    with z.open("good.npy", "w") as f:
        npformat.write_array(f, np.array([1], dtype=np.int32))
    z.writestr("broken.npy", b"this is not an npy file")
