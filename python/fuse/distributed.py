"""Data-parallel training through torch.distributed: what
`fuse.compile_step(..., process_group=pg)` adds to a compiled step.

Each rank runs the same compiled step on its own batch. The step writes its
gradients straight into flat bucket buffers of about `bucket_cap_mb` each
(DDP's 25 MB by default), filled in the order in which the gradients become
final in the step's schedule (the executable's `output_last_use`). The
runtime records a signal after the last step that touches a bucket's
gradients; the bucket's all-reduce (the average over the group, through the
group's backend, NCCL on GPUs) is queued on a communication stream behind
that signal, so it runs while the rest of the backward is still computing,
as DDP's reducer overlaps its buckets. The step's stream then waits for
every bucket before anything after the step (the optimizer) runs.

Memory: the buckets are the gradients themselves (`param.grad` are views of
them, as DDP's gradient_as_bucket_view=True gives): no copy into a bucket and
no second set of gradients; each gradient starts on a 256-byte boundary, the
only memory added.

Agreement: before compiling, the ranks exchange what they are about to
compile (a hash of the exported graph, the options, the batch's shapes and
dtypes, the bucket size). Any difference, or an export that failed on some
rank, raises FuseError on every rank naming the ranks and what differs,
instead of a hang in a collective later.
"""

import dataclasses
import hashlib
import json

from .errors import FuseError

__all__ = ["DEFAULT_BUCKET_CAP_MB", "Bucket", "plan_buckets", "prepare_model", "rank_summary",
           "check_ranks_agree", "GradientReducer"]

DEFAULT_BUCKET_CAP_MB = 25
# Where each gradient starts in its bucket: the arena's alignment, more than
# the 16 bytes the kernels' vector accesses need.
BUCKET_ALIGN_BYTES = 256

@dataclasses.dataclass
class Bucket:
    """Gradients all-reduced together, in one flat buffer of `numel`
    elements of `dtype` (`itemsize` bytes each); ready once step
    `ready_step` has run."""
    dtype: str
    itemsize: int
    outputs: list = dataclasses.field(default_factory=list)   # signature output indices
    names: list = dataclasses.field(default_factory=list)
    offsets: list = dataclasses.field(default_factory=list)   # element offsets in the buffer
    numel: int = 0
    ready_step: int = -1

    @property
    def bytes(self):
        return self.numel * self.itemsize


def plan_buckets(gradients, cap_bytes):
    """Buckets for `gradients`, a list of dicts with the keys `output`,
    `name`, `dtype`, `numel`, `last_use` (the last step that touches the
    gradient) and `itemsize` (bytes per element). Gradients are taken in the order they become final; a bucket
    is closed when the next gradient would take it past `cap_bytes` (a
    gradient larger than the cap gets a bucket of its own) or has another
    dtype. A bucket is ready after the last use of its last gradient."""
    if cap_bytes <= 0:
        raise ValueError(f"the bucket size must be positive, not {cap_bytes} bytes")
    buckets = []
    for grad in sorted(gradients, key=lambda g: (g["last_use"], g["output"])):
        size = grad["itemsize"]
        align = max(BUCKET_ALIGN_BYTES // size, 1)
        current = buckets[-1] if buckets else None
        if current is not None:
            start = -(-current.numel // align) * align
            if current.dtype != grad["dtype"] or (start + grad["numel"]) * size > cap_bytes:
                current = None
        if current is None:
            current = Bucket(grad["dtype"], size)
            buckets.append(current)
            start = 0
        current.outputs.append(grad["output"])
        current.names.append(grad["name"])
        current.offsets.append(start)
        current.numel = start + grad["numel"]
        current.ready_step = max(current.ready_step, grad["last_use"])
    return buckets


def prepare_model(model, process_group):
    """Checks that data-parallel training can start and gives every rank
    rank 0's parameters and buffers (as DistributedDataParallel does when it
    wraps a model)."""
    import torch
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_initialized():
        raise FuseError("compile_step(process_group=...) needs torch.distributed initialized "
                        "(torch.distributed.init_process_group) in every process")
    tensors = list(model.parameters()) + list(model.buffers())
    devices = {t.device for t in tensors}
    if any(d.type != "cuda" for d in devices) or len(devices) > 1:
        raise FuseError(f"data-parallel compile_step needs the model on this rank's GPU; its tensors are on "
                        f"{', '.join(sorted(str(d) for d in devices))}")
    source = _global_rank(process_group, 0)
    with torch.no_grad():
        for tensor in tensors:
            dist.broadcast(tensor.data, src=source, group=process_group)


def _global_rank(process_group, group_rank):
    import torch.distributed as dist
    if process_group is None or process_group is dist.group.WORLD:
        return group_rank
    return dist.get_process_group_ranks(process_group)[group_rank]


def sparse_embedding_candidates(model, process_group):
    """{module name: world size} of the embeddings whose gradient may be
    exchanged as rows (Step decides per lookup, from the table's size)."""
    import torch
    import torch.distributed as dist
    world = dist.get_world_size(process_group)
    return {name: world for name, m in model.named_modules()
            if isinstance(m, torch.nn.Embedding) and m.weight.requires_grad and not m.sparse
            and m.max_norm is None}


def rank_summary(text, options, param_names, batch, failure=None):
    """What this rank is about to compile, for check_ranks_agree: a hash of
    the exported graph with its options, and the facts a reader needs to
    see what differs (options, parameter count, the batch's dtypes and
    shapes). With `failure`, the error that stopped this rank instead."""
    if failure is not None:
        return {"error": f"{type(failure).__name__}: {failure}"}
    digest = hashlib.sha256(text.encode())
    digest.update(json.dumps(options, sort_keys=True, default=str).encode())
    return {"graph": digest.hexdigest()[:16],
            "options": json.dumps(options, sort_keys=True, default=str),
            "parameters": len(param_names),
            "batch": ", ".join(f"{str(t.dtype).replace('torch.', '')} {list(t.shape)}" for t in batch)}


def check_ranks_agree(process_group, summary):
    """Exchanges `summary` (a dict of plain values: what this rank is about
    to compile, or {"error": message} where it could not get that far) with
    every rank of `process_group`; raises FuseError on every rank where any
    rank failed or any summary differs from rank 0's."""
    import torch.distributed as dist
    world = dist.get_world_size(process_group)
    gathered = [None] * world
    dist.all_gather_object(gathered, summary, group=process_group)
    failed = [(rank, s["error"]) for rank, s in enumerate(gathered) if s.get("error")]
    if failed:
        lines = "\n".join(f"  rank {rank}: {error}" for rank, error in failed)
        raise FuseError(f"compile_step failed on {len(failed)} of {world} ranks:\n{lines}")
    reference = gathered[0]
    differences = []
    for rank, other in enumerate(gathered[1:], 1):
        for key in sorted(set(reference) | set(other)):
            if reference.get(key) != other.get(key):
                differences.append(f"  {key}: rank 0 has {reference.get(key)}, rank {rank} has {other.get(key)}")
    if differences:
        raise FuseError("the ranks of the process group would compile different steps (data-parallel "
                        "training needs the same graph, shapes and options everywhere):\n"
                        + "\n".join(differences))


class GradientReducer:
    """The gradient buckets of one compiled step and their all-reduce.

    `gradients`: (output index, parameter) pairs of the step's gradient
    outputs. `views` gives each such output's tensor (a view of its bucket)
    to bind; `reduce()`, called right after the step is queued on the
    current stream, queues the bucketed all-reduce and makes the current
    stream wait for it. With overlap=False every bucket waits for the whole
    step (a baseline to measure the overlap against)."""

    def __init__(self, compiled, gradients, process_group, bucket_cap_mb=DEFAULT_BUCKET_CAP_MB, overlap=True):
        import torch
        import torch.distributed as dist
        self.compiled, self.process_group, self.overlap = compiled, process_group, overlap
        signature = compiled.signature
        last_use = signature.get("output_last_use")
        if last_use is None or len(last_use) != len(compiled.outputs):
            raise FuseError("the Fuse library does not report when outputs become final "
                            "(output_last_use): rebuild it")
        params = {}
        entries = []
        for index, param in gradients:
            spec = compiled.outputs[index]
            params[index] = param
            entries.append(dict(output=index, name=spec.name, dtype=spec.dtype, itemsize=param.element_size(),
                                numel=param.numel(), last_use=last_use[index]))
        self.buckets = plan_buckets(entries, int(bucket_cap_mb * 2 ** 20))
        device = compiled.device
        self.flat, self.views = [], {}
        for bucket in self.buckets:
            dtype = compiled.outputs[bucket.outputs[0]].torch_dtype()
            flat = torch.zeros(bucket.numel, dtype=dtype, device=device)
            self.flat.append(flat)
            for index, offset in zip(bucket.outputs, bucket.offsets):
                param = params[index]
                self.views[index] = flat[offset:offset + param.numel()].view(param.shape)
        session = compiled._require_session()
        session.set_signals([b.ready_step for b in self.buckets] if overlap else [])
        self.stream = torch.cuda.Stream(device)
        self._world = dist.get_world_size(process_group)
        self._average = dist.get_backend(process_group) == "nccl"

    @property
    def bytes(self):
        return sum(t.numel() * t.element_size() for t in self.flat)

    def reduce(self):
        import torch
        import torch.distributed as dist
        main = torch.cuda.current_stream(self.compiled.device)
        session = self.compiled.session
        if not self.overlap:
            self.stream.wait_stream(main)
        works = []
        for index, flat in enumerate(self.flat):
            if self.overlap:
                session.wait_signal(index, self.stream.cuda_stream)
            with torch.cuda.stream(self.stream):
                if self._average:
                    works.append(dist.all_reduce(flat, op=dist.ReduceOp.AVG, group=self.process_group,
                                                 async_op=True))
                else:
                    # Backends without AVG (gloo): the sum, then the mean.
                    dist.all_reduce(flat, op=dist.ReduceOp.SUM, group=self.process_group)
                    flat.div_(self._world)
        # Each wait makes the current (step) stream wait for that
        # all-reduce; the host does not block.
        for work in works:
            work.wait()

    def add_rows(self, grad, ids, rows, padding_idx=None):
        """Adds an embedding's gradient given as rows, averaged over the
        ranks, into `grad` (already all-reduced): every rank gathers all
        ranks' ids and rows and accumulates them the same way (index_put_
        with accumulate sorts the ids first: the same sum in the same order
        on every rank, so the ranks' parameters stay identical)."""
        import torch
        import torch.distributed as dist
        ids = ids.reshape(-1)
        rows = rows.reshape(ids.numel(), -1)
        all_ids = torch.empty(self._world * ids.numel(), dtype=ids.dtype, device=ids.device)
        all_rows = torch.empty(self._world * rows.shape[0], rows.shape[1], dtype=rows.dtype, device=rows.device)
        dist.all_gather_into_tensor(all_ids, ids, group=self.process_group)
        dist.all_gather_into_tensor(all_rows, rows, group=self.process_group)
        all_rows.mul_(1.0 / self._world)
        if padding_idx is not None:
            # nn.Embedding gives the padding row no gradient.
            all_rows.masked_fill_((all_ids == padding_idx).unsqueeze(1), 0.0)
        grad.index_put_((all_ids,), all_rows, accumulate=True)

    def describe(self):
        """One line per bucket: its gradients, size and when it is ready."""
        lines = []
        for i, bucket in enumerate(self.buckets):
            names = ", ".join(bucket.names[:3]) + (f" and {len(bucket.names) - 3} more"
                                                   if len(bucket.names) > 3 else "")
            lines.append(f"bucket {i}: {bucket.bytes / 2 ** 20:.1f} MiB, {len(bucket.names)} gradients "
                         f"({names}), ready after step {bucket.ready_step}")
        return "\n".join(lines)
