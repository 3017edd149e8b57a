"""Optimizers that torch does not have, for `fuse.compile_step` to run
inside the graph (fuse/exporter/_optimizers.py holds the in-graph update; the eager
`step()` here is the reference it is checked against).

    optimizer = fuse.optim.Lion(model.parameters(), lr=1e-4, betas=(0.9, 0.99), weight_decay=0.1)
    step = fuse.compile_step(model, loss_fn, batch, optimizer=optimizer)
"""

import torch

__all__ = ["Lion"]


class Lion(torch.optim.Optimizer):
    """Lion (Chen et al., "Symbolic Discovery of Optimization Algorithms",
    2023): per parameter, with momentum m (state `exp_avg`, zeros at first),

        c = beta1 * m + (1 - beta1) * g
        p = p * (1 - lr * weight_decay) - lr * sign(c)
        m = beta2 * m + (1 - beta2) * g

    Its learning rate is usually 3-10x smaller than AdamW's and its weight
    decay as much larger."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, *, maximize=False):
        if not lr >= 0.0:
            raise ValueError(f"Lion: learning rate must be >= 0, not {lr}")
        if not all(0.0 <= b <= 1.0 for b in betas) or len(betas) != 2:
            raise ValueError(f"Lion: betas must be two numbers in [0, 1], not {betas}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Lion: weight_decay must be >= 0, not {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay, maximize=maximize))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, decay = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if "exp_avg" not in state:
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                m = state["exp_avg"]
                direction = m * beta1 + grad * (1 - beta1)
                if decay:
                    p.mul_(1 - lr * decay)
                p.add_(torch.sign(direction), alpha=-lr)
                m.mul_(beta2).add_(grad, alpha=1 - beta2)
        return loss
