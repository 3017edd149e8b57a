//===- Passes.td - Fuse pass declarations ---------------------*- tablegen -*-===//
//
// Every Fuse pass is declared here, named `fuse-<verb>-<noun>`, with its
// options; DEBUG_TYPE in its implementation equals that name.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TRANSFORMS_PASSES_TD
#define FUSE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseDecompose : Pass<"fuse-decompose"> {
  let summary = "rewrite composite ops into fuse primitives";
  let description = [{
    Rewrites the composite ops that a generic fusion runs as well as a
    hand-written kernel into the dialect's primitives: elementwise ops,
    `compare`/`select`/`cast`, `constant`/`iota`, `broadcast_in_dim` and
    `reduce`. `fuse.scaled_dot_product_attention` and its backward are never
    decomposed: a flash-attention kernel never writes the score matrix, which
    no fusion of primitives can avoid.

    Each decomposition gives the numbers the op defines (and the reference
    interpreter computes): f16 and bf16 operands are cast to f32, the whole
    computation runs in f32 (statistics included) and the results are cast
    back once; softmax-like ops subtract the row maximum before `exp`. New
    ops take the composite's location. Nothing else changes: the pass
    neither folds nor moves or merges constants (`canonicalize` and `cse`
    do that).

    `keep` names composites to leave whole. A name the pass does not know
    is an error when the pass is set up, which lists the valid names; the
    attention ops may be named and stay whole anyway.

    - `gelu` erf: `0.5·x·(1 + erf(x·(1/√2)))` (mul, erf, add, mul, mul);
      tanh: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    - `silu`: `x·sigmoid(x)`.
    - `softmax`: `reduce max`, broadcast, sub, exp, `reduce sum`, broadcast,
      div. `log_softmax`: the same up to the sum, then log, broadcast and
      `(x - max) - log(sum)`.
    - `layer_norm`: `mean` = `reduce mean`; centred squares, `reduce mean`,
      `+ epsilon`, rsqrt = `rstd`; `(x - mean)·rstd`, then `·weight` and
      `+ bias` (broadcast) when present. The f32 `mean` and `rstd` results
      are the two statistics.
    - `rms_norm`: `x·rsqrt(mean(x²) + epsilon)`, then `·weight`.
    - `cross_entropy`: `lse = max + log(sum(exp(x - max)))` per position; the
      label's logit picked by an `iota`/`compare eq` one-hot, `select` and
      `reduce sum`; `lse - picked`, zeroed by `select` where the label is
      `ignore_index`; `sum` adds the positions, `mean` also divides by the
      number counted (the sum of the cast mask: 0/0 = NaN when none is).
    - `cross_entropy_backward`: `(exp(x - lse) - onehot)·g`, `g` the incoming
      gradient (divided by the count under `mean`), zeroed by `select` at
      ignored positions.
    - `argmax`: the first index where `x` equals its `reduce max`
      (`reduce min` of `select(x == max, iota, size)`); for floats the first
      NaN instead when there is one, as torch.argmax. In f32, as the
      reduction kernels accumulate: exact for rows below 2^24 elements and
      integer operands below 2^24 in magnitude.

    Example:

    ```
    fuse-opt graph.mlir --fuse-decompose='keep=layer_norm,cross_entropy,cross_entropy_backward'
    ```
  }];
  let options = [
    ListOption<"keep", "keep", "std::string",
               "Composite ops to leave whole, by name without `fuse.`: "
               "gelu, silu, softmax, log_softmax, layer_norm, rms_norm, "
               "cross_entropy, cross_entropy_backward, argmax (default: none; "
               "attention is always kept; an unknown name is an error)">,
  ];
  let dependentDialects = ["::mlir::fuse::FuseDialect"];
}

def FuseAutoMixedPrecision : Pass<"fuse-auto-mixed-precision", "ModuleOp"> {
  let summary = "run matmul and attention in bf16 or f16, everything else in f32";
  let description = [{
    Casts the operands of every `fuse.matmul`, `fuse.scaled_dot_product_attention`
    and its backward that computes in f32 to `dtype` (tensor cores; the ops
    accumulate in f32), a float attention mask included, and casts their
    results back to f32 for their users; attention's log-sum-exp stays f32.
    Ops already in a 16-bit type are left alone. Every other op (reductions,
    softmax, normalisation and its statistics, losses, the optimizer update)
    keeps computing in f32; master weights stay f32 function arguments.

    Each value is cast to `dtype` at most once, right after its definition
    (an argument at the start of the body), and that cast is shared by all
    its low-precision users (a weight's cast serves its forward and backward
    matmuls, an activation's cast is the copy the backward reads). A cast to
    `dtype` of a value widened from `dtype` is that value, and a cast moves
    above data-movement ops (reshape, transpose, broadcast_in_dim, slice) to
    meet such a widening: an attention output reshaped into a projection
    stays in `dtype` end to end, and a matmul of a matmul reads the 16-bit
    result. Casts and f32 data movement left without users are erased.

    A linear layer's output, the sum of a matmul's `dtype` result (widened
    to f32) and a broadcast bias, is rounded to `dtype` and widened again for
    its users, as `torch.autocast`'s `addmm` and `linear` return it: what the
    backward keeps of it (an MLP's pre-activation, read by the activation's
    backward) is then a `dtype` value, half the memory of f32.
    `round-linear-outputs=false` keeps the sum in f32.

    With `narrow-results`, a result that widens a `dtype` value to f32 (the
    policy's cast back, possibly under data movement) is returned as that value
    in `dtype`, and the function's result type changes with it: what
    `torch.autocast` returns, e.g. a language model's logits from its last
    matmul, in half the memory. It is meant for inference graphs: the
    gradients of a training step would come back in `dtype` too.

    With `weight-copies`, a training step that updates its weights (an
    f32 argument donated and returned under the same `fuse.name`, as an
    in-graph optimizer's parameters are) keeps the `dtype` copy of each such
    weight a matmul reads as state instead of casting the weight on every
    call: a new donated argument `amp_weight.<name>` replaces the cast, and
    a new result of that name returns the cast of the updated weight. Where
    the update keeps the weight under a condition (`select(apply, new,
    weight)`, a micro-batch that only accumulates; an overflowing f16 step),
    the copy is kept under the same condition, so its kernel writes nothing
    on those calls. The caller fills each copy from its weight before the
    first call and after changing the weight itself. It runs after loss
    scaling; an existing argument or result of a copy's name is an error.

    With `dtype=f16` a training step (one with `fuse.cross_entropy_backward`,
    the loss's gradient) also gets dynamic loss scaling in the graph, as
    PyTorch's GradScaler does outside it:

    - new arguments `loss_scale` and `loss_scale.growth_tracker` (f32
      scalars; start them at 65536 and 0) and results `loss_scale`,
      `loss_scale.growth_tracker` and `found_inf` (i1) are appended;
    - the loss gradient (`grad_loss` of each `fuse.cross_entropy_backward`)
      is multiplied by the scale;
    - each gradient is multiplied by 1/scale where it leaves the part of the
      graph that is linear in the scaled loss gradient (the backward: products
      with one such value, quotients by other values, sums, negation,
      reductions by sum or mean, matmul with one such operand, data movement,
      gather, scatter_add, concat, float casts, select, attention backward),
      for the uses outside that part only;
    - `found_inf` is true if any such unscaled gradient holds an inf or a NaN
      (the sum of gradient·0 is then NaN, not 0);
    - then every result that updates an argument of the same `fuse.name` (the
      parameters and optimizer state) returns that argument unchanged, and
      the scale is halved with the tracker reset; otherwise the tracker
      counts the finite step, and at `growth-interval` the scale doubles
      (unless that overflows f32) and the tracker restarts. Results named
      `grad.*` (a step without an optimizer) are returned unscaled; their
      caller reads `found_inf`.

    New ops are located at `loss_scale`, `loss_scale.unscale`, `found_inf`,
    `loss_scale.skip_update` and `loss_scale.update`. At f16 it is an error
    when a training step (one with attention backward or `grad.*` results)
    has no `fuse.cross_entropy_backward`, since there is no loss gradient to
    scale; when the function already has an argument or result of a name the
    scaler adds; and when a result named like an argument has another type.
    Inference graphs get no loss scaling, and bf16, whose range is f32's,
    needs none. An unknown `dtype` or a `growth-interval` below 1 is an error
    when the pass is set up.

    Example:

    ```
    fuse-opt step.mlir --fuse-auto-mixed-precision=dtype=f16
    ```
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"bf16\"",
           "Low-precision type of matmul and attention operands: bf16 or f16">,
    Option<"growthInterval", "growth-interval", "int64_t", /*default=*/"2000",
           "f16 only: finite steps in a row after which the loss scale doubles">,
    Option<"roundLinearOutputs", "round-linear-outputs", "bool",
           /*default=*/"true",
           "Round a linear layer's output (a 16-bit matmul's result plus a "
           "broadcast bias) to `dtype`, as torch.autocast's addmm and linear "
           "return it, so that what the backward keeps of it is 16-bit; "
           "false keeps the sum in f32">,
    Option<"narrowResults", "narrow-results", "bool", /*default=*/"false",
           "Return a result computed in `dtype` (a widening cast, possibly "
           "under data movement) in `dtype`, as torch.autocast does: for "
           "inference graphs, whose logits then take half the memory">,
    Option<"weightCopies", "weight-copies", "bool", /*default=*/"false",
           "Keep the `dtype` copy of each weight the step updates in place "
           "as state (argument and result `amp_weight.<name>`), written by "
           "the update, instead of casting the weight on every call">,
  ];
  let dependentDialects = ["::mlir::fuse::FuseDialect"];
}

def FuseFormFusions : Pass<"fuse-form-fusions", "ModuleOp"> {
  let summary = "group ops into fuse.fusion regions, one kernel each";
  let description = [{
    A reduce over dimensions that are neither trailing nor leading (the
    backward of grouped-query attention sums the heads that share a key) is
    first rewritten as a reduce of a transposed view with those dimensions
    last, so that it is a row reduction.

    Then every attention op the flash kernels take (bf16 or f16, head dim 64
    or 128) becomes an `attention` fusion together with the views around it
    that those kernels can address by element strides (head dim contiguous,
    every row start and stride a multiple of 8 elements, 16 bytes): a
    private copy of the reshapes, transposes and slices between each of q,
    k, v (the backward's dout and out too) and the value they view, and the
    reshapes and transposes that are the only readers of each result (o;
    dq, dk, dv), with a concat whose parts are exactly those of all the
    results (GPT-2's [B, T, 3C] projection gradient). The kernels then read
    q, k, v straight from the projections and write their results in the
    layout their readers want: no copy kernel runs around the attention.
    Where the strides cannot express a view it stays outside, as a kernel of
    its own; chains of reshapes alone stay outside too (they are free). When
    the forward writes its output through views, the backward reads it back
    through their inverse.

    Groups each function's top-level ops into `fuse.fusion` regions, greedily
    and by the cost model, as XLA's priority fusion does. Every op starts in
    a group of its own. Every pair of groups joined by a value (producer and
    consumer) or by an input both read (siblings) whose merge is legal and
    pays is queued by what it saves: bytes that no longer go through global
    memory (a value passed inside the kernel, a shared input read once) plus
    a launch, weighed as 8 MB of traffic (`kLaunchEquivalentBytes`). The
    best merge is made, the merged group's pairs are weighed again, and so
    on until none is left. A merge is legal when:

    - the merged group is a kernel the code generator has a template for:
      - `loop`: elementwise ops, broadcast_in_dim, transpose, slice, concat,
        gather, iota, random and reshape over one iteration space (every
        stored value has the same number of elements);
      - `row_reduction`: reductions over the trailing dimensions that all
        share their rows (same element counts), with a prologue and an
        epilogue over the rows or over their statistics (softmax, layer norm
        and its backward, cross entropy with its backward, residual add +
        norm); smaller values (a weight vector, an optimizer scalar) are
        computed where they are read, through broadcasts; no transpose;
      - `column_reduction`: reductions over the leading dimensions (bias
        and norm-weight gradients) with a prologue over the full space and
        an epilogue over the columns only (the grid must finish before a
        column's sum is known), which takes an optimizer's update of that
        parameter;
      - `gemm_epilogue`: one matmul and what cuBLASLt applies to its result,
        `act(alpha·AB + C + bias)` then a cast: casts, reshapes that keep
        the last dimension, a multiply by a splat, an add of a bias
        broadcast over rows and an add of a residual, then tanh-GELU or
        ReLU; any value of the chain may also be stored (GELU_AUX). An
        epilogue cuBLASLt cannot apply (erf GELU) goes to the consumer's
        kernel instead;
      - `attention`: one attention op, forward or backward (with the views
        above, formed before the search and never merged into);
    - a matmul, attention or reduction is never copied, and a kernel has at
      most one matmul or attention op;
    - the groups stay acyclic (a topological order of the groups is kept
      through the merges, so the check only searches between the two);
    - the kernel reads at most `max-inputs` values and writes at most
      `max-outputs`.

    Before grouping, a reshape, broadcast or iota read by several ops, and
    an elementwise op on scalars (the optimizer's bias corrections), is
    copied into each reader that can take it when the cost model says the
    copies cost less than storing and loading the value (and, for scalars,
    than launching a kernel for them).

    Ops with no fusion template (scatter_add, argmax, cumsum, dense
    constants, composites left whole, reductions over scattered dimensions,
    fusions already formed) stay as they are, and the groups around them
    stay correct. A lone matmul stays a plain GEMM call and a lone reshape
    a view; every other group becomes a `fuse.fusion` of its kind, its
    inputs the values it reads (splat constants are copied into the body),
    its results the values read outside it.

    Example:

    ```
    fuse-opt step.mlir --fuse-form-fusions=max-inputs=16 --fuse-print-cost=per-op=false
    ```
  }];
  let options = [
    Option<"maxInputs", "max-inputs", "unsigned", /*default=*/"24",
           "Most inputs a fusion may read">,
    Option<"maxOutputs", "max-outputs", "unsigned", /*default=*/"8",
           "Most results a fusion may write">,
  ];
  let dependentDialects = ["::mlir::fuse::FuseDialect"];
}

def FuseRematerialize : Pass<"fuse-rematerialize", "ModuleOp"> {
  let summary = "recompute forward values in the backward instead of keeping them";
  let description = [{
    For each training step (a function with a result named `loss`; its
    forward is what `loss` depends on, everything else is the backward)
    after fusion, chooses which forward values the backward reads from
    memory and which it recomputes, as AOTAutograd's min-cut partitioner
    does: each forward value is an edge whose capacity is its bytes, a
    recomputed value needs its producer's inputs, the backward's reads go to
    the sink, and recomputing a kernel costs its FLOPs times a price in
    bytes per FLOP. A minimum cut keeps the cheapest set of values from
    which the backward recomputes the rest.

    Recomputation goes inside the reading kernel when the merged body is
    still a kernel of its kind (a pointwise chain recomputed in a backward
    loop or reduction: no launch added, and the value never goes through
    memory); otherwise the producing kernel is cloned before its backward
    reader as a kernel of its own, which later readers share or make again
    for themselves (a shared copy lives from its first reader to its last).
    Forward kernels stop storing what is no longer read.

    - No budget: only what is free is recomputed (pointwise kernels that
      all their backward readers can compute inside).
    - `budget` (bytes) or `fraction` (of the peak without
      rematerialization): FLOPs are priced from dear (1 byte per FLOP) to
      free, and kernels that draw random numbers (recomputed bit for bit:
      the same Philox seed and offset) only at the end; each price is tried
      with copies shared, memory-bound copies per reader, and all copies
      per reader. Of the attempts whose peak fits, the one adding the least
      estimated time (FLOPs, bytes and launches, weighed as fusion weighs
      them) is kept. The peak is the largest sum of live
      intermediate bytes once fuse-schedule's scheduler has ordered the
      function (which the pass leaves so ordered): Liveness's peak, which
      fuse-plan-memory's lower bound can exceed by its 256-byte alignment.

    A remark at the function reports the values recomputed, the kernels
    added, the peak before and after and the FLOPs added. A budget no policy
    meets is an error that gives the smallest peak reached; a budget on a
    function that is no training step is an error if its peak is over it.

    Example:

    ```
    fuse-opt step.mlir --fuse-pipeline --fuse-rematerialize=fraction=0.5
    ```
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "Peak bytes of the planned arena not to exceed (0: no budget)">,
    Option<"fraction", "fraction", "double", /*default=*/"0",
           "Budget as a fraction of the peak without rematerialization "
           "(0: no budget)">,
  ];
  let dependentDialects = ["::mlir::fuse::FuseDialect"];
}

def FuseSchedule : Pass<"fuse-schedule", "ModuleOp"> {
  let summary = "order each function's kernels to lower peak live memory";
  let description = [{
    Reorders the top-level ops of each function's body (one block) into
    another topological order whose peak live bytes are lower, counted as
    the Liveness analysis counts them for fuse-plan-memory: the buffers of
    the arena, not arguments, returned values or constants; a view
    (`fuse.reshape`) shares its operand's buffer, which lives until the last
    read through either; at each op its outputs and its dying inputs are
    live together. The ops are pure (a `fuse.fusion` has its body's
    effects), so every topological order computes the same results. Ops
    with memory effects, if any appear, keep their relative order. The
    terminator stays last.

    A list scheduler builds each order: an op is ready once the ops whose
    values it reads have run, and one ready op runs at a time. Sources (ops
    that read only arguments and constants, such as a weight's cast to bf16)
    are not scheduled on their own: each runs right before the first op that
    reads it, so that its value is not held before it is needed. Three
    priorities give three orders:

    - the given order (with its sources moved down);
    - freeing first: an op that lowers the live bytes when it runs (it is
      the last reader of buffers larger than what it writes, such as a
      weight gradient that consumes a large activation early in the
      backward) runs as soon as it is ready, the largest drop first;
      otherwise the given order;
    - greedy: always the ready op with the largest drop (bytes of the
      buffers it reads last, through any view, less the bytes it and the
      sources it pulls in write), the earliest in the given order among
      equals.

    Bookkeeping is incremental (a priority queue; a buffer's drop is added
    to its last reader once all its other readers have run), so a schedule
    takes O((ops + reads) log ops). The peak of each order is computed
    before anything moves; the lowest wins, the earlier in the list above
    on a tie, and only if it is lower than the given order's peak:
    otherwise the block is left as it is. The pass never makes the peak
    worse. Constants (`fuse.constant`) go to the top of the block.

    With `report`, prints for each function its peak live bytes and the
    position (index among the top-level ops) where it is reached, before
    and after, and the fewest ops that had to move:

    ```
    $ fuse-opt step.mlir --fuse-pipeline --fuse-schedule=report=true -o /dev/null
    schedule of @gpt2_infer
    peak before: 382009344 bytes at 52
    peak after: 138412032 bytes at 4
    ops moved: 48 of 160
    ```
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print each function's peak live bytes before and after">,
  ];
}

def FusePlanMemory : Pass<"fuse-plan-memory", "ModuleOp"> {
  let summary = "place every intermediate buffer at an offset in one arena";
  let description = [{
    Plans the memory of each function over its schedule, the current order
    of its body (`fuse-schedule` runs before), and records the plan in the
    IR (see `#fuse.buffer` in the dialect reference):

    - Buffers and live ranges are those of `fuse/Analysis/Liveness.h`: one
      buffer per result of a top-level op, live from the op that writes it
      to the last op that reads it, both included (a read inside a fusion
      counts at the fusion). A `fuse.reshape` is a view: it shares the
      buffer it views, which lives until the view's last read, and carries
      that buffer's placement. Constants are baked into the code: they have
      no buffer and get no `fuse.buffers`.
    - Function arguments and returned values are the caller's memory:
      returned values are `external`, never in the arena, and an argument is
      never written, unless it is donated (`fuse.donated`, below).
    - Except values in the arena: an argument with `fuse.arena_offset = N`
      is arena bytes at `N`, live from the start to its last read and then
      free (arguments at one offset are one read-only block); a result with
      `fuse.in_arena` is planned in the arena, live to the end, and its
      offset recorded as `fuse.arena_offset` (an offset given on the result
      is kept; an argument or a constant returned stays the caller's). The
      packer places the fixed blocks first and the others around them.
    - In place: a result of an elementwise op, or of a `loop`,
      `column_reduction` or `row_reduction` fusion, takes over the buffer
      of an input that dies at that op (its live range ends there) when
      both have as many elements of as many bytes and, in a fusion, the
      body reads that input only through elementwise ops and reshapes, so
      that element `i` of the result depends on element `i` of the input
      alone (the loop template computes every element of an index in one
      thread, reading before writing; the column-reduction template does so
      per element, and per column in the thread that finishes the column,
      so an optimizer's update of a bias fused into its gradient's
      reduction is written over the bias). A row reduction's body may also
      feed it to a `fuse.reduce`: every pass over a row gives element `j`
      to the same thread, the reductions' passes end before the last one
      writes, so cross entropy's gradient is written over the logits. Only
      an input in the arena
      qualifies, and only for a result in the arena; or an input in a
      donated argument's memory that the function does not return: its
      result is then placed in that argument (`argument = N`), returned or
      not. The pair is one block in time: the result gets the input's
      offset, and the lower bound counts the two once. A donated argument
      whose `fuse.name` is also a returned value's (an optimizer's `w` and
      its update, returned as `w`) is never given to a value returned under
      another name, so the caller can bind each update to the memory it
      came from.
    - The rest of the buffers are packed into one arena by `strategy`, each
      at a multiple of 256 bytes and occupying its size rounded up to 256.
      `best-fit` (default) places blocks largest first, each in the
      smallest gap left among those live at the same time (TFLite's greedy
      by size, XLA's heap simulator), over a few orders of the blocks
      (by size, by size and lifetime, by area, by lifetime, by schedule),
      keeping the smallest arena; `linear` gives every block its own slot,
      a baseline with no reuse. The lower bound is the largest sum, over
      the schedule's positions, of the aligned sizes of the blocks live
      there: no packing of this schedule can be smaller.

    Every top-level op with a buffer gets `fuse.buffers` (one
    `#fuse.buffer` per result); each function gets `fuse.arena_size` and
    `fuse.arena_lower_bound` (i64 bytes), and the module the largest of
    each over its functions (functions run one at a time and can share one
    arena). Running the pass again replans from scratch.

    `max-arena-bytes` is the device's memory left for the arena: a function
    whose arena is larger is an error that names it, its arena size, its
    lower bound and the limit, and the pass fails. An unknown `strategy` is
    an error when the pass is set up, which lists the valid names.

    Example:

    ```
    fuse-opt step.mlir --fuse-pipeline --fuse-plan-memory=max-arena-bytes=80000000000 --fuse-print-memory
    ```

    ```mlir
    %e = fuse.exp %x {fuse.buffers = [#fuse.buffer<offset = 0, size = 1024, live = [0, 1]>]} : tensor<16x16xf32>
    %n = fuse.neg %e {fuse.buffers = [#fuse.buffer<offset = 0, size = 1024, live = [1, 2]>]} : tensor<16x16xf32>
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"best-fit\"",
           "Packing strategy: best-fit (greedy by size, best fit) or linear "
           "(no reuse)">,
    Option<"maxArenaBytes", "max-arena-bytes", "int64_t", /*default=*/"0",
           "Largest arena the device can hold, in bytes; a larger one is an "
           "error (0: no limit)">,
  ];
  let dependentDialects = ["::mlir::fuse::FuseDialect"];
}

def FusePrintMemory : Pass<"fuse-print-memory", "ModuleOp"> {
  let summary = "print each function's arena size, lower bound and largest buffers";
  let description = [{
    Prints, for every function of the module in order, the memory plan that
    `fuse-plan-memory` recorded: the arena size and the lower bound, in
    bytes and in decimal units, their ratio, how many buffers are in the
    arena (and how many of those are written in place), returned, or in
    arguments, then a table of the largest arena buffers (`top`, 10 by
    default): bytes, offset, live range, the op that writes it (a fusion
    with its kind) and where it comes from: the exporter's node name and
    the model source line (`addmm (pytorch_utils.py:119)`). Views
    (reshapes) are not listed apart from the buffer they view. The IR is
    not changed.

    A function that has not been planned (no `fuse.arena_size`), or an op
    with a buffer but no `fuse.buffers` (one added after planning), is an
    error that names it.

    Example:

    ```
    fuse-opt step.mlir --fuse-pipeline --fuse-plan-memory --fuse-print-memory -o /dev/null
    ```
  }];
  let options = [
    Option<"top", "top", "unsigned", /*default=*/"10",
           "How many of the largest buffers to list">,
  ];
}

def FusePrintCost : Pass<"fuse-print-cost", "ModuleOp"> {
  let summary = "print each function's FLOPs, bytes moved and kernel count";
  let description = [{
    Prints, for every function of the module in order, a table of its
    top-level ops (op, location name or `file:line:col`, FLOPs, bytes read,
    bytes written, kernels) in exact integers, then the totals, each also in
    decimal units, and a line `kernels: N`. The IR is not changed.

    FLOPs follow the MFU convention of PaLM and nanoGPT
    (`6·N + 12·L·H·Q·T` per token for a training step): matmul `2·M·N·K`
    per batch; attention forward `4·B·H·Tq·Tk·D` (QK^T and PV), causal or
    not, since PaLM's formula counts the whole score matrix; attention
    backward twice the forward; elementwise ops, transcendentals included,
    1 per output element; reductions 1 per input element; softmax and
    log_softmax 5, layer_norm 5 (+1 with weight, +1 with bias), rms_norm 3
    (+1 with weight), cross_entropy 4 and its backward 6 per element; shape
    ops, constants, iota and random 0.

    Bytes count each operand read once and each result written once, except:
    reshape is a view (0 bytes); gather and slice read only what they take;
    constant, iota and random only write; a splat constant is an immediate
    (0 bytes, for it and for its readers). A `fuse.fusion` reads its inputs
    and writes its results only, while its FLOPs are those of the ops inside.

    Kernels: every top-level op is one kernel (a fusion is one, a matmul is
    one GEMM call) except reshape and constant (baked in at compile time).
    A fusion's row names its kind (`fuse.fusion row_reduction`), so the
    table of a fused graph is its kernel plan.

    Example:

    ```
    fuse-opt graph.mlir --fuse-print-cost=per-op=false -o /dev/null
    ```
  }];
  let options = [
    Option<"perOp", "per-op", "bool", /*default=*/"true",
           "Print a row per op before the totals">,
  ];
}

#endif // FUSE_TRANSFORMS_PASSES_TD
