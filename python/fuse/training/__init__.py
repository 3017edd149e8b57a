"""fuse.compile_step's machinery: binding a step's tensors (`_step_io`), the
optimizer state it updates (`_step_optimizer`) and its random numbers
(`_step_rng`). Its faces are `fuse.step` and `fuse.optim`; these modules
are internal."""
