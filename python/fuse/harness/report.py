"""Markdown tables of a harness results file (the README's figures are
made by this, never by hand)."""

from .systems import SYSTEMS

SHORT = {"eager": "eager", "inductor": "Inductor", "inductor-reduce-overhead": "Inductor r-o",
         "fuse-compile": "Fuse torch.compile", "fuse-step": "Fuse compile_step"}


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def grouped(results):
    """{(model, batch, seq, mode): {system: row}} in the file's order."""
    groups = {}
    for row in results["rows"]:
        groups.setdefault((row["model"], row["batch"], row["seq"], row["mode"]), {})[row["system"]] = row
    return groups


def _label(model, batch, seq, rows=None):
    """The rows' name: model, batch and sequence, and the micro-batches of
    a step that runs several (a recipe's accumulation_steps)."""
    label = model if batch is None else f"{model} B{batch} T{seq}"
    steps = _accumulation(rows)
    return f"{label} x{steps}" if steps and steps > 1 else label


def _row_label(results, row):
    """A row's label as its group's rows give it (a failed row may not say
    what its step is)."""
    group = grouped(results).get((row["model"], row["batch"], row["seq"], row["mode"]), {})
    return _label(row["model"], row["batch"], row["seq"], list(group.values()) + [row])


def _accumulation(rows):
    """The micro-batches per step of a group's rows (dict or list), or None."""
    rows = list((rows or {}).values()) if isinstance(rows, dict) else list(rows or [])
    for row in rows:
        recipe = row.get("recipe")
        if isinstance(recipe, dict) and recipe.get("accumulation_steps"):
            return recipe["accumulation_steps"]
    return None


def _ok(row, key):
    return None if row is None or row.get("error") else row.get(key)


def _best_inductor(rows):
    times = [_ok(rows.get(s), "ms") for s in ("inductor", "inductor-reduce-overhead")]
    times = [t for t in times if t]
    return min(times) if times else None


def time_table(results):
    systems = [s for s in SYSTEMS if any(s in g for g in grouped(results).values())]
    lines = ["| model | mode | " + " | ".join(f"{SHORT[s]} ms" for s in systems)
             + " | Fuse torch.compile vs best Inductor | Fuse compile_step vs best Inductor |",
             "| --- | --- |" + " ---: |" * (len(systems) + 2)]
    for (model, batch, seq, mode), rows in grouped(results).items():
        best = _best_inductor(rows)
        cells = []
        for system in systems:
            row = rows.get(system)
            cells.append("failed" if row is not None and row.get("error") else _fmt(_ok(row, "ms"), ".1f"))
        ratios = []
        for system in ("fuse-compile", "fuse-step"):
            ms = _ok(rows.get(system), "ms")
            ratios.append(f"{best / ms:.2f}x" if best and ms else "-")
        lines.append(f"| {_label(model, batch, seq, rows)} | {mode} | " + " | ".join(cells) + " | "
                     + " | ".join(ratios) + " |")
    return "\n".join(lines)


def detail_table(results):
    systems = [s for s in SYSTEMS if any(s in g for g in grouped(results).values())]
    order = "/".join(SHORT[s] for s in systems)
    lines = [f"Per system, in the order {order}:", "",
             "| model | mode | throughput ms | peak GiB | kernels | MFU % | compile s, cold | compile s, warm "
             "| loss (logits) rel. err. vs f32 | gradient rel. err. vs f32 |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (model, batch, seq, mode), rows in grouped(results).items():
        def cells(key, spec, scale=1.0):
            return "/".join(_fmt(None if _ok(rows.get(s), key) is None else _ok(rows.get(s), key) * scale, spec)
                            for s in systems)
        lines.append(f"| {_label(model, batch, seq, rows)} | {mode} | {cells('throughput_ms', '.1f')} "
                     f"| {cells('peak_gib', '.2f')} | {cells('kernels', '.0f')} | {cells('mfu', '.0f', 100)} "
                     f"| {cells('compile_cold_s', '.1f')} | {cells('compile_warm_s', '.1f')} "
                     f"| {cells('loss_rel_err', '.1e')} | {cells('grad_rel_err', '.1e')} |")
    return "\n".join(lines)


def failures(results):
    lines = []
    for row in results["rows"]:
        if row.get("error"):
            lines.append(f"- {_row_label(results, row)} {row['mode']} {row['system']}: "
                         f"{row['error']}")
    return "\n".join(lines)


def markdown(results):
    commands = results["command"].split("; then ")
    continued = f" ({len(commands)} calls, each continuing the file)" if len(commands) > 1 else ""
    commit = f", commit {results['commit']}" if results.get("commit") else ""
    head = (f"Measured on {results['gpu']} ({results['date']}, torch {results['torch']}{commit}) by "
            f"`{commands[-1]}`{continued}; each row in a process of its own. Step time: median ms "
            "(CUDA events and a synchronize around each step).")
    parts = [head, "", time_table(results), "", detail_table(results)]
    failed = failures(results)
    if failed:
        parts += ["", "Failed rows:", "", failed]
    missing = missing_rows(results)
    if missing:
        parts += ["", "Not measured: " + "; ".join(missing) + "."]
    recipes = recipe_notes(results)
    if recipes:
        parts += ["", "Whole optimizer steps (the workload's recipe; a step runs every micro-batch, its loss is "
                      "their mean, its gradients those the first update used): " + "; ".join(recipes) + "."]
    stochastic = list(dict.fromkeys(_row_label(results, r) for r in results["rows"] if r.get("stochastic")))
    if stochastic:
        parts += ["", "Training with dropout, its errors against f32 recorded but not judged (each system draws "
                      "masks of its own): " + ", ".join(stochastic) + "."]
    return "\n".join(parts)


def recipe_notes(results):
    """'label: recipe' for each group whose rows time a whole optimizer step."""
    from .workloads import Recipe
    notes = {}
    for row in results["rows"]:
        recipe = row.get("recipe")
        if isinstance(recipe, dict):
            label = _row_label(results, row)
            try:
                text = Recipe.of(dict(recipe, options=dict(recipe.get("options") or {}))).describe()
            except (TypeError, ValueError):
                text = str(recipe)
            notes.setdefault(label, f"{label}: {text}")
    return list(notes.values())


def missing_rows(results):
    """'model mode: systems' for each group that lacks systems the others have."""
    present = [s for s in SYSTEMS if any(s in g for g in grouped(results).values())]
    lines = []
    for (model, batch, seq, mode), rows in grouped(results).items():
        absent = [s for s in present if s not in rows]
        if absent:
            lines.append(f"{_label(model, batch, seq, rows)} {mode}: {', '.join(absent)}")
    return lines
