"""The bindings to Fuse's runtime: ctypes over the C API (`_capi`:
libFuseC.so), pooled outputs at stable addresses (`_stable_io`), a graph's
bindings kept from call to call (`_bound_call`), shared scratch memory
(`_shared_scratch`) and the compile-phase report (`_phases`). Its faces
are `fuse.compiler` (fuse.compile) and `fuse.profile`; these modules are
internal."""
