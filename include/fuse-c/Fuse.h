/*===- fuse-c/Fuse.h - Fuse's C API --------------------------------*- C -*-===*\
|*                                                                            *|
|* What Python (ctypes) and other languages load: libFuseC.so, one shared     *|
|* library with MLIR linked in statically. It compiles a graph in the `fuse`  *|
|* dialect into an executable, saves and loads executables, and runs them on *|
|* the GPU with the caller's device pointers and CUDA stream.                 *|
|*                                                                            *|
|* Conventions:                                                               *|
|*  - Every function that can fail returns NULL (handles, strings) or a      *|
|*    non-zero int; fuseLastError() then gives the message (per thread,       *|
|*    valid until the next call into the library on that thread). No C++     *|
|*    exception or abort crosses this interface.                              *|
|*  - Strings returned as `char *` are owned by the caller: free them with   *|
|*    fuseFreeString. `const char *` results are owned by the library.        *|
|*  - JSON documents are UTF-8 text; their schemas are described at each     *|
|*    function.                                                               *|
|*  - Device pointers and streams are void * (a cudaStream_t; NULL is the    *|
|*    legacy default stream), so this header needs no CUDA headers.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FUSE_C_FUSE_H
#define FUSE_C_FUSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FUSE_C_EXPORT __attribute__((visibility("default")))
#else
#define FUSE_C_EXPORT
#endif

/* The version of this interface ("fuse-c/3"; 2 added FuseScratch and
 * FuseSessionOptions.scratch, 3 arenas per run: FuseSessionOptions.
 * arena_per_run, fuseSessionSetArena and the signature's "arena_offset"). */
FUSE_C_EXPORT const char *fuseApiVersion(void);

/* The message of the last failure on this thread ("" if none). */
FUSE_C_EXPORT const char *fuseLastError(void);

/* Frees a string this library returned as `char *`. NULL is ignored. */
FUSE_C_EXPORT void fuseFreeString(char *string);

/* The GPU this process would run on, as JSON:
 *   {"name", "arch" ("sm_90a"), "compute_capability" ("9.0"),
 *    "multiprocessors", "free_bytes", "total_bytes"}
 * NULL where there is no GPU or no driver (fuseLastError says which). */
FUSE_C_EXPORT char *fuseDeviceInfo(void);

/* ---------------------------------------------------------------------------
 * Compiling
 * ------------------------------------------------------------------------ */

/* A compiled step: plain data (kernels' source, launches, GEMMs, arena
 * layout). It is not bound to a GPU until a session is created from it. */
typedef struct FuseExecutable FuseExecutable;

typedef struct FuseCompileOptions {
  /* A pass pipeline in MLIR's textual form; NULL or "" means
   * "fuse-pipeline" (e.g. "fuse-pipeline{amp=bf16 remat-fraction=0.5}"). */
  const char *pipeline;
  /* The function to compile; NULL or "": the module's only function. */
  const char *entry;
  /* The target architecture, e.g. "sm_90a"; NULL or "": the current GPU's
   * (fails where there is no GPU). */
  const char *arch;
  /* A name for the graph in messages (a file name); NULL: "<graph>". */
  const char *source_name;
} FuseCompileOptions;

/* Parses, verifies and compiles `text` (a module in the fuse dialect,
 * `size` bytes; it need not end in NUL). Errors name the line and column
 * of the graph, or the pass that failed. NULL on failure. */
FUSE_C_EXPORT FuseExecutable *fuseCompile(const char *text, size_t size,
                                          const FuseCompileOptions *options);

/* Reads an executable that fuseSaveExecutable (or `fuse-run
 * --save-executable`) wrote. NULL on failure (missing, corrupt, another
 * version). */
FUSE_C_EXPORT FuseExecutable *fuseLoadExecutable(const char *path);

/* Writes `executable` to `path`. 0 on success. */
FUSE_C_EXPORT int fuseSaveExecutable(const FuseExecutable *executable,
                                     const char *path);

FUSE_C_EXPORT void fuseFreeExecutable(FuseExecutable *executable);

/* The executable's signature and plan summary, as JSON:
 *   {"entry", "arch",
 *    "inputs":  [{"name", "dtype" ("f32"|"bf16"|"f16"|"i64"|"i32"|"i1"),
 *                 "shape": [..], "bytes",
 *                 "arena_offset" (-1, or where a run finds it (input) or
 *                                 leaves it (output) in its arena)}],
 *    "outputs": [same],
 *    "donated": [[output index, input index], ...]   (an output written in
 *                the memory of a donated input: pass the same pointer for
 *                both and no copy is made),
 *    "arena_bytes", "workspace_bytes", "constant_bytes",
 *    "kernels" (distinct), "launches", "gemms", "steps", "flops",
 *    "output_last_use": [step, ...]  (per output, the last step that reads
 *                or writes it, -1 if none: the output is final after it;
 *                see fuseSessionSetSignals)}
 * NULL on failure. */
FUSE_C_EXPORT char *fuseDescribeExecutable(const FuseExecutable *executable);

/* The plan as `fuse-translate --emit-plan` prints it. */
FUSE_C_EXPORT char *fusePlanText(const FuseExecutable *executable);

/* Where fuseCompile's time went, as JSON: [[phase, seconds], ...] in the
 * order the phases ran ("parse and verify", each pass by its argument,
 * "code generation"); [] for an executable read from a file. Not part of
 * fuseDescribeExecutable: it says how this handle was made, not what the
 * executable is. NULL on failure. */
FUSE_C_EXPORT char *fuseExecutableCompilePhases(const FuseExecutable *executable);

/* ---------------------------------------------------------------------------
 * Running
 * ------------------------------------------------------------------------ */

/* An executable loaded on the current GPU: kernels compiled by NVRTC (through
 * the on-disk cubin cache), one arena and one workspace allocated. */
typedef struct FuseSession FuseSession;

/* Device memory that sessions share for their arena, workspace and
 * cuBLASLt workspace, which hold nothing from one run to the next: for
 * sessions whose runs never overlap, such as the graphs of one model run in
 * turn (a forward, then its backward). It grows to the largest arena and
 * workspace its sessions need; a run on another stream than the run before
 * it waits for that run. Made on the current GPU; each session holds on to
 * it, so it may be freed before them. */
typedef struct FuseScratch FuseScratch;

/* NULL on failure (no GPU, out of memory). */
FUSE_C_EXPORT FuseScratch *fuseCreateScratch(void);
FUSE_C_EXPORT void fuseFreeScratch(FuseScratch *scratch);
/* Device bytes it holds now; -1 for NULL. */
FUSE_C_EXPORT int64_t fuseScratchBytes(const FuseScratch *scratch);

typedef struct FuseSessionOptions {
  /* The cubin cache; NULL or "": $FUSE_CACHE_DIR, else
   * $XDG_CACHE_HOME/fuse, else ~/.cache/fuse. */
  const char *cache_dir;
  /* 0: compile every kernel (the cache is neither read nor written). */
  int use_cache;
  /* 0: plain launches every step instead of a captured CUDA graph. */
  int use_cuda_graph;
  /* 0: no progress line on stderr during long compiles. */
  int progress;
  /* NULL: an arena and workspaces of the session's own; else the shared
   * memory (fuseCreateScratch) on the same GPU. */
  FuseScratch *scratch;
  /* 1: the session has no arena of its own; the caller gives it one
   * (fuseSessionSetArena) before running. Required where the signature has
   * inputs or outputs with an "arena_offset" (fuse.arena_offset): values a
   * run finds, or leaves, in the arena at that byte offset, not in the
   * pointer passed for them (which may be NULL). */
  int arena_per_run;
} FuseSessionOptions;

/* Fills `options` with the defaults (cache on, CUDA graphs on, progress
 * on). */
FUSE_C_EXPORT void fuseDefaultSessionOptions(FuseSessionOptions *options);

/* Loads `executable` on the current GPU (the executable may be freed
 * afterwards). `options` may be NULL for the defaults. Fails on no GPU, an
 * architecture mismatch, NVRTC errors, out of memory. */
FUSE_C_EXPORT FuseSession *fuseCreateSession(const FuseExecutable *executable,
                                             const FuseSessionOptions *options);

FUSE_C_EXPORT void fuseFreeSession(FuseSession *session);

/* How the session got its kernels, the device memory it holds and its CUDA
 * graphs so far, as JSON:
 *   {"seconds", "modules", "cache_hits", "compiled",
 *    "device_bytes" (arena, workspace, constants, cuBLASLt workspace;
 *                    with shared scratch memory, the constants alone),
 *    "graph_captures" (one per new set of pointers; recaptures included),
 *    "cached_graphs" (kept for replay, one per set, at most 32)} */
FUSE_C_EXPORT char *fuseSessionCompileReport(const FuseSession *session);

/* Enqueues one step on `stream`: `inputs` and `outputs` are device pointers
 * in the order of the signature, each to a dense, contiguous tensor of the
 * signature's dtype and shape. Returns once queued (0), or non-zero with
 * the reason (a wrong count, a NULL pointer, a launch error). */
FUSE_C_EXPORT int fuseRun(FuseSession *session, void *const *inputs,
                          size_t num_inputs, void *const *outputs,
                          size_t num_outputs, void *stream);

/* With FuseSessionOptions.arena_per_run: the device memory (`bytes`, at
 * least the signature's "arena_bytes", 256-byte aligned) that the next runs
 * use as their arena. A CUDA graph is captured per arena address. */
FUSE_C_EXPORT int fuseSessionSetArena(FuseSession *session, void *arena,
                                      int64_t bytes);

/* Signals, for work on other streams that must start part-way through a
 * step (a data-parallel step all-reduces each gradient bucket as soon as
 * its last gradient is written, "output_last_use" in the description, while
 * the rest of the backward runs). From the next fuseRun on, signal i is
 * recorded after step after_steps[i] (-1: before the first step) of every
 * run, CUDA graph replays included. Replaces earlier signals; `count` 0
 * removes them. Fails on a step out of range. */
FUSE_C_EXPORT int fuseSessionSetSignals(FuseSession *session,
                                        const int64_t *after_steps,
                                        size_t count);

/* Makes `stream` wait (cudaStreamWaitEvent) for signal `signal` of the run
 * queued last; the host does not wait. */
FUSE_C_EXPORT int fuseSessionWaitSignal(FuseSession *session, size_t signal,
                                        void *stream);

/* Waits for `stream`; 0 on success, else the asynchronous error. */
FUSE_C_EXPORT int fuseSynchronize(FuseSession *session, void *stream);

typedef struct FuseProfileOptions {
  int warmup;      /* warm-up steps before timing (default 3) */
  int iterations;  /* timed iterations (default 20) */
  int counters;    /* 1: CUPTI counters; 0: estimates, said so */
  double peak_tflops; /* > 0: the dense bf16 peak to use for MFU */
} FuseProfileOptions;

FUSE_C_EXPORT void fuseDefaultProfileOptions(FuseProfileOptions *options);

/* Profiles the step with these pointers (Executor::profile; outputs are
 * overwritten, inputs must hold valid data) and returns the report as JSON,
 * schema "fuse-profile/1" (what `fuse-run --profile-json` writes).
 * `options` may be NULL. Where `table` is not NULL it receives the terminal
 * table (`fuse-run --profile`), and where `trace` is not NULL the Chrome
 * trace (`fuse-run --trace`); free both with fuseFreeString. NULL on
 * failure. */
FUSE_C_EXPORT char *fuseProfile(FuseSession *session, void *const *inputs,
                                size_t num_inputs, void *const *outputs,
                                size_t num_outputs, void *stream,
                                const FuseProfileOptions *options,
                                char **table, char **trace);

#ifdef __cplusplus
}
#endif

#endif /* FUSE_C_FUSE_H */
