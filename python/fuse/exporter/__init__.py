"""The PyTorch exporter's machinery: tracing (`_tracing`: make_fx with
PyTorch's and Fuse's own decompositions), the FX-to-fuse converter
(`_fx_to_mlir`) and its ATen mappings (`_aten_*`, registered in
`_aten_ops`), the text it writes (`_mlir_text`), source locations
(`_source`), the function a module's step becomes (`_steps`) and the
optimizer updates traced into it (`_optimizers`). Its face is `fuse.export`;
these modules are internal."""
