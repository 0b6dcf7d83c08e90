#!/usr/bin/env python3
"""Differential test: Meshloom's DeviceMesh and redistribute planner against the installed PyTorch.

Random cases are answered twice: by `meshloom-launch mesh --batch` / `plan --batch` (the JSON Lines machine
interface of shared/contract.md) and by the installed torch, which runs every rank of the world in turn in
this one process on a fake process group (backend "fake", FakeStore). The answers are compared op by op.

    python3 tests/differential/torch_differential.py --launcher build/diff/launcher/meshloom-launch \
        [--cases 300] [--seed 1] [--report report.json]

Exit status: 0 when everything agrees, 1 on any mismatch, 2 when the launcher cannot be run, 77 (skip) when
torch is not importable. Stdlib and torch only. Not part of CI (CI has no torch). See README.md beside it.
"""

import argparse
import json
import logging
import math
import random
import re
import subprocess
import sys
import time
import warnings

SKIP = 77
AXIS_NAMES = ["pp", "dp", "cp", "tp", "ep", "sp"]  # random meshes pick their axis names from these
DEPENDENT = object()  # a probe whose torch side could not be built (an earlier step raised on this rank)


# ---------------------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------------------

def prod(xs):
    return math.prod(xs) if xs else 1


def unravel(index, shape):
    """Row-major coordinate of `index` in `shape` (the last axis varies fastest)."""
    coord = []
    for size in reversed(shape):
        coord.append(index % size)
        index //= size
    return list(reversed(coord))


def nest(flat, shape):
    """A flat list as nested lists of `shape` (row-major)."""
    if len(shape) <= 1:
        return list(flat)
    step = prod(shape[1:])
    return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def flatten_list(x):
    if isinstance(x, list):
        return [y for item in x for y in flatten_list(item)]
    return [x]


def error_kind(text):
    """'KeyError: Invalid ...' -> 'KeyError'."""
    return text.split(":", 1)[0].strip()


def run_launcher(launcher, subcommand, lines):
    """Feeds JSON lines to `meshloom-launch <subcommand> --batch` and returns one parsed answer per line."""
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    proc = subprocess.run([launcher, subcommand, "--batch"], input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{launcher} {subcommand} --batch exited {proc.returncode}: {proc.stderr.strip()[:2000]}")
    out = proc.stdout.splitlines()
    if len(out) != len(lines):
        raise RuntimeError(f"{launcher} {subcommand} --batch answered {len(out)} lines for {len(lines)} requests")
    return [json.loads(line) for line in out]


class Category:
    """Counts and keeps the outcome of one category of comparisons."""

    def __init__(self, name, title):
        self.name, self.title = name, title
        self.cases = 0
        self.checks = 0
        self.mismatch_cases = []   # [{case, differences}]
        self.deviation_cases = []  # [{case, differences (each with "explained")}]
        self.stopped_early = False

    def add(self, case_record, differences):
        self.cases += 1
        real = [d for d in differences if not d.get("explained")]
        if real:
            self.mismatch_cases.append({**case_record, "differences": differences})
        elif differences:
            self.deviation_cases.append({**case_record, "differences": differences})

    def summary(self, strict):
        mismatches = len(self.mismatch_cases) + (len(self.deviation_cases) if strict else 0)
        line = f"{self.name}: {self.cases} cases, {mismatches} mismatches"
        extra = [f"{self.checks} checks"]
        if self.deviation_cases and not strict:
            extra.append(f"{len(self.deviation_cases)} cases differ only by documented deviations")
        if self.stopped_early:
            extra.append("stopped early: --max-seconds reached")
        return line + " (" + "; ".join(extra) + ")"

    def failed(self, strict):
        return bool(self.mismatch_cases) or (strict and bool(self.deviation_cases))

    def to_json(self, keep):
        return {"title": self.title, "cases": self.cases, "checks": self.checks,
                "mismatches": len(self.mismatch_cases), "deviations": len(self.deviation_cases),
                "stopped_early": self.stopped_early,
                "mismatch_details": self.mismatch_cases[:keep], "deviation_details": self.deviation_cases[:keep]}


# ---------------------------------------------------------------------------------------------------------
# The torch side: fake process groups
# ---------------------------------------------------------------------------------------------------------

class Torch:
    def __init__(self):
        import torch
        import torch.distributed as dist
        from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
        from torch.testing._internal.distributed.fake_pg import FakeStore
        self.torch, self.dist = torch, dist
        self.DeviceMesh, self.init_device_mesh, self.FakeStore = DeviceMesh, init_device_mesh, FakeStore
        self.version = torch.__version__
        self.has_unflatten = hasattr(DeviceMesh, "_unflatten")

    def init_rank(self, rank, world):
        if self.dist.is_initialized():
            self.dist.destroy_process_group()
        self.dist.init_process_group("fake", store=self.FakeStore(), rank=rank, world_size=world)

    def close(self):
        if self.dist.is_initialized():
            self.dist.destroy_process_group()


def torch_value(fn):
    """Runs a torch probe: its value as JSON-like data, or ["error", kind, message]."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - every torch failure is an answer to compare
        return ["error", type(e).__name__, str(e)[:300]]
    if value is DEPENDENT:
        return value
    return to_plain(value)


def to_plain(value):
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------------------
# Category 1: DeviceMesh
# ---------------------------------------------------------------------------------------------------------

def gen_mesh_case(rng, index):
    ndim = rng.choice([1, 2, 2, 3, 3, 4])
    shape = []
    for _ in range(ndim):
        choices = [s for s in (1, 2, 2, 2, 3, 4, 4, 8, 1, 2, 3) if prod(shape) * s <= 64]
        shape.append(rng.choice(choices))
    names = rng.sample(AXIS_NAMES, ndim)
    numel = prod(shape)
    case = {"index": index, "shape": shape, "names": names, "world": numel, "ranks": None}
    if rng.random() < 0.25:  # an explicit rank tensor: a permutation of a world, maybe with ranks left out
        world = min(64, numel + rng.choice([0, 0, 1, 2, 5]))
        case["world"] = world
        case["ranks"] = nest(rng.sample(range(world), numel), shape)

    # slices: one in the mesh's order, one in any order (may be refused), rarely a repeated name
    slices = []
    k = rng.randint(1, ndim)
    slices.append(sorted(rng.sample(range(ndim), k)))
    if ndim >= 2:
        slices.append(rng.sample(range(ndim), rng.randint(2, ndim)))
    if rng.random() < 0.1:
        i = rng.randrange(ndim)
        slices.append([i, i])
    case["slices"] = [[names[i] for i in s] for s in slices]

    # flattened axes (two or more axes in the mesh's order), then slices of the root by the flattened names
    flattens, flat_slices = [], []
    if ndim >= 2:
        subsets = set()
        for _ in range(rng.choice([1, 1, 2])):
            subsets.add(tuple(sorted(rng.sample(range(ndim), rng.randint(2, ndim)))))
        for subset in sorted(subsets):
            axes = [names[i] for i in subset]
            flattens.append(axes)
            fname = "_".join(axes)
            flat_slices.append([fname])
            others = [names[i] for i in range(ndim) if i not in subset]
            if others and rng.random() < 0.6:
                other = rng.choice(others)
                flat_slices.append([fname, other] if rng.random() < 0.5 else [other, fname])
    case["flattens"], case["flat_slices"] = flattens, flat_slices

    # unflatten one axis into 2 or 3 axes (size-1 parts allowed)
    case["unflatten"] = None
    if rng.random() < 0.6:
        dim = rng.randrange(ndim)
        size = shape[dim]
        splits = [(a, size // a) for a in range(1, size + 1) if size % a == 0]
        sizes = list(rng.choice(splits))
        if rng.random() < 0.3:
            a = rng.choice([d for d in range(1, sizes[1] + 1) if sizes[1] % d == 0])
            sizes = [sizes[0], a, sizes[1] // a]
        case["unflatten"] = {"dim": dim, "sizes": sizes, "names": [f"u{i}" for i in range(len(sizes))]}
    return case


def mesh_plan(case):
    """The case as an ordered list of steps, each with our op(s) and the torch action that mirrors it.

    A "setup" step builds and saves a mesh (ours: an op with "as"; torch: a mesh kept in `ctx` per rank).
    A "probe" step asks one question for each rank in `ranks` (ours: one op per rank; torch: on that rank).
    """
    names, shape, world = case["names"], case["shape"], case["world"]
    members = set(range(world)) if case["ranks"] is None else set(flatten_list(case["ranks"]))
    identity = case["ranks"] is None  # torch's local ranks (process-group ranks) equal coordinates only then
    all_ranks = list(range(world))
    member_ranks = sorted(members)
    steps = []

    def setup(op, save, build, needs=()):
        steps.append({"kind": "setup", "op": op, "save": save, "build": build, "needs": list(needs)})

    def probe(label, op_for_rank, fn, ranks, needs=(), compare="exact"):
        steps.append({"kind": "probe", "label": label, "op": op_for_rank, "fn": fn, "ranks": ranks,
                      "needs": list(needs), "compare": compare})

    def submesh(on, snames):
        return lambda r: {"op": "submesh_of", "on": on, "names": snames, "rank": r}

    def pg_ranks(T, mesh, dim):
        return T.dist.get_process_group_ranks(mesh.get_group(dim))

    # the root
    probe("root.mesh", submesh("root", names), lambda T, ctx: ctx["root"].mesh, all_ranks, ["root"])
    probe("root.get_coordinate()", lambda r: {"op": "coordinate", "rank": r},
          lambda T, ctx: ctx["root"].get_coordinate(), all_ranks, ["root"])
    for a in names:
        probe(f"root[{a!r}].mesh", submesh("root", [a]), lambda T, ctx, a=a: ctx["root"][a].mesh, all_ranks,
              ["root"])
        probe(f"ranks of root.get_group({a!r}) (sorted)", submesh("root", [a]),
              lambda T, ctx, a=a: pg_ranks(T, ctx["root"], a), member_ranks, ["root"], compare="sorted")
        if identity:
            probe(f"root.get_local_rank({a!r})", lambda r, a=a: {"op": "local_rank", "rank": r, "dim": a},
                  lambda T, ctx, a=a: ctx["root"].get_local_rank(a), member_ranks, ["root"])

    # slices of the root by its own axis names
    for i, snames in enumerate(case["slices"]):
        save = f"s{i}"
        setup({"op": "slice", "names": snames, "as": save}, save,
              lambda T, ctx, snames=snames: ctx["root"][tuple(snames)], ["root"])
        probe(f"root[{tuple(snames)}].mesh", submesh("root", snames),
              lambda T, ctx, snames=snames: ctx["root"][tuple(snames)].mesh, all_ranks, ["root"])
        probe(f"root[{tuple(snames)}].get_coordinate()", lambda r, save=save: {"op": "coordinate", "on": save, "rank": r},
              lambda T, ctx, save=save: ctx[save].get_coordinate(), all_ranks, [save])

    # flattened axes
    for i, axes in enumerate(case["flattens"]):
        fname, sl, save = "_".join(axes), f"fs{i}", f"f{i}"
        setup({"op": "slice", "names": axes, "as": sl}, sl,
              lambda T, ctx, axes=axes: ctx["root"][tuple(axes)], ["root"])
        setup({"op": "flatten", "on": sl, "as": save}, save, lambda T, ctx, sl=sl: ctx[sl]._flatten(), [sl])
        probe(f"root[{tuple(axes)}]._flatten().mesh", submesh(save, [fname]),
              lambda T, ctx, save=save: ctx[save].mesh, all_ranks, [save])
        probe(f"root[{tuple(axes)}]._flatten().get_coordinate()",
              lambda r, save=save: {"op": "coordinate", "on": save, "rank": r},
              lambda T, ctx, save=save: ctx[save].get_coordinate(), all_ranks, [save])
        probe(f"ranks of {fname}.get_group() (sorted)", submesh(save, [fname]),
              lambda T, ctx, save=save: pg_ranks(T, ctx[save], None), member_ranks, [save], compare="sorted")
        if identity:
            probe(f"{fname}.get_local_rank()", lambda r, fname=fname: {"op": "local_rank", "rank": r, "dim": fname},
                  lambda T, ctx, save=save: ctx[save].get_local_rank(), member_ranks, [save])
    flat_saves = {"_".join(axes): f"f{i}" for i, axes in enumerate(case["flattens"])}
    for snames in case["flat_slices"]:
        needs = ["root"] + [flat_saves[n] for n in snames if n in flat_saves]
        probe(f"root[{tuple(snames)}].mesh", submesh("root", snames),
              lambda T, ctx, snames=snames: ctx["root"][tuple(snames)].mesh, all_ranks, needs)

    # unflatten
    u = case["unflatten"]
    if u is not None:
        unames = names[:u["dim"]] + u["names"] + names[u["dim"] + 1:]
        setup({"op": "unflatten", "dim": u["dim"], "sizes": u["sizes"], "names": u["names"], "as": "u"}, "u",
              lambda T, ctx: ctx["root"]._unflatten(u["dim"], tuple(u["sizes"]), tuple(u["names"])), ["root"])
        call = f"root._unflatten({u['dim']}, {tuple(u['sizes'])}, {tuple(u['names'])})"
        probe(f"{call}.mesh", submesh("u", unames), lambda T, ctx: ctx["u"].mesh, all_ranks, ["u"])
        probe(f"{call}.get_coordinate()", lambda r: {"op": "coordinate", "on": "u", "rank": r},
              lambda T, ctx: ctx["u"].get_coordinate(), all_ranks, ["u"])
        for n in u["names"]:
            probe(f"{call}[{n!r}].mesh", submesh("u", [n]), lambda T, ctx, n=n: ctx["u"][n].mesh, all_ranks, ["u"])
            probe(f"ranks of {call}.get_group({n!r}) (sorted)", submesh("u", [n]),
                  lambda T, ctx, n=n: pg_ranks(T, ctx["u"], n), member_ranks, ["u"], compare="sorted")
            if identity:
                probe(f"{call}.get_local_rank({n!r})",
                      lambda r, n=n: {"op": "local_rank", "on": "u", "rank": r, "dim": n},
                      lambda T, ctx, n=n: ctx["u"].get_local_rank(n), member_ranks, ["u"])
    return steps


def mesh_request(case, steps):
    """Our batch line for the case, and for each op the (step index, rank) it answers (None for setups)."""
    mesh = {"shape": case["shape"], "names": case["names"]}
    if case["ranks"] is not None:
        mesh = {"ranks": case["ranks"], "names": case["names"]}
    ops, keys = [], []
    for si, step in enumerate(steps):
        if step["kind"] == "setup":
            ops.append(step["op"])
            keys.append(None)
        else:
            for r in step["ranks"]:
                ops.append(step["op"](r))
                keys.append((si, r))
    return {"world": case["world"], "mesh": mesh, "ops": ops}, keys


def our_value(op, result):
    """The part of our result that answers the probe, or ["error", kind, message]."""
    if not result.get("ok"):
        return ["error", error_kind(result.get("error", "")), result.get("error", "")]
    if op["op"] == "submesh_of":
        return result["meshes"][0]
    if op["op"] == "coordinate":
        return result["coordinate"]
    if op["op"] == "local_rank":
        return result["local_rank"]
    raise AssertionError(op)


def same_answer(ours, theirs, compare):
    ours_err = isinstance(ours, list) and len(ours) == 3 and ours[0] == "error"
    theirs_err = isinstance(theirs, list) and len(theirs) == 3 and theirs[0] == "error"
    if ours_err or theirs_err:
        return ours_err and theirs_err and ours[1] == theirs[1]
    if compare == "sorted":
        return sorted(flatten_list(ours)) == sorted(flatten_list(theirs))
    return ours == theirs


def explain_mesh_difference(case, label, ours, theirs):
    """A documented, deliberate difference between Meshloom and this torch version, or None."""
    ours_err = isinstance(ours, list) and len(ours) == 3 and ours[0] == "error"
    theirs_err = isinstance(theirs, list) and len(theirs) == 3 and theirs[0] == "error"
    if theirs_err and theirs[1] == "NotImplementedError" and "contiguous flattened dim" in theirs[2] and \
            (not ours_err or ours[1] in ("KeyError", "RuntimeError")):
        return ("slicing a non-contiguous flattened axis from the root: this torch (the 'layout' DeviceMesh) "
                "raises NotImplementedError; Meshloom follows the newest PyTorch ('flat'), which slices it, "
                "subject to the order and overlap checks (shared/reference/devicemesh.md section 3)")
    if theirs_err and (not ours_err or "is not part of" in ours[2]):
        if theirs[1] == "KeyError" and "ascending order" in theirs[2]:
            sizes = dict(zip(case["names"], case["shape"]))
            if any(sizes.get(n) == 1 for n in label_names(label)):
                return ("slice order check with a size-1 axis: this torch compares raw strides and refuses; "
                        "Meshloom follows the newest PyTorch ('flat'), whose normalized size-1 axes have no "
                        "stride to compare (docs/03-mesh.md, slice: 'size-1 axes have no leaves'), and answers "
                        "the slice (or, for a rank in none of its instances, RuntimeError)")
    return None


def label_names(label):
    """The axis names inside root[(...)] of a probe label."""
    start, end = label.find("[("), label.find(")]")
    if start < 0 or end < 0:
        return []
    return [s.strip().strip("'\"") for s in label[start + 2:end].split(",") if s.strip()]


def run_mesh_category(T, launcher, args, rng):
    cat = Category("mesh", "DeviceMesh: coordinates, groups, slices, _flatten, _unflatten on every rank")
    cases = [gen_mesh_case(rng, i) for i in range(args.cases)]
    if not T.has_unflatten:
        for c in cases:
            c["unflatten"] = None
    plans = [mesh_plan(c) for c in cases]
    requests = [mesh_request(c, p) for c, p in zip(cases, plans)]
    answers = run_launcher(launcher, "mesh", [req for req, _ in requests])
    start = time.time()
    for case, steps, (request, keys), answer in zip(cases, plans, requests, answers):
        if args.max_seconds and time.time() - start > args.max_seconds:
            cat.stopped_early = True
            break
        progress(cat, start)
        try:
            differences = compare_mesh_case(T, case, steps, request, keys, answer)
        except Exception as e:  # noqa: BLE001 - a failure of this script, reported with the case
            differences = [{"probe": "the script itself", "error": f"{type(e).__name__}: {e}"}]
        cat.checks += sum(d["checks"] for d in differences if "checks" in d)
        cat.add({"case": case, "request": request}, [d for d in differences if "checks" not in d])
    T.close()
    return [cat]


def progress(cat, start):
    if cat.cases and cat.cases % 50 == 0:
        print(f"  {cat.name}: {cat.cases} cases done, {time.time() - start:.0f} s", flush=True)


def compare_mesh_case(T, case, steps, request, keys, answer):
    """Runs the case on every rank in torch; the differences, plus one {"checks": n} record."""
    checks = 0
    differences = []
    if not answer.get("ok"):
        return [{"probe": "the whole line", "meshloom": answer, "torch": "a mesh"}]
    ours = {}
    for op, key, result in zip(request["ops"], keys, answer["results"]):
        if key is not None:
            ours[key] = our_value(op, result)
    for r in range(case["world"]):
        T.init_rank(r, case["world"])
        ctx = {}
        try:
            if case["ranks"] is None:
                ctx["root"] = T.init_device_mesh("cpu", tuple(case["shape"]), mesh_dim_names=tuple(case["names"]))
            else:
                ctx["root"] = T.DeviceMesh("cpu", T.torch.tensor(case["ranks"]), mesh_dim_names=tuple(case["names"]))
        except Exception as e:  # noqa: BLE001
            differences.append({"probe": "building the root", "rank": r, "meshloom": "ok",
                                "torch": ["error", type(e).__name__, str(e)[:300]]})
            continue
        for si, step in enumerate(steps):
            ready = all(n in ctx for n in step["needs"])
            if step["kind"] == "setup":
                if ready:
                    try:
                        ctx[step["save"]] = step["build"](T, ctx)
                    except Exception:  # noqa: BLE001 - probes that need it are skipped on this rank
                        pass
                continue
            if r not in step["ranks"]:
                continue
            theirs = torch_value(lambda: step["fn"](T, ctx) if ready else DEPENDENT)
            if theirs is DEPENDENT:
                continue
            checks += 1
            mine = ours[(si, r)]
            if not same_answer(mine, theirs, step["compare"]):
                diff = {"probe": step["label"], "rank": r, "meshloom": mine, "torch": theirs}
                why = explain_mesh_difference(case, step["label"], mine, theirs)
                if why:
                    diff["explained"] = why
                differences.append(diff)
    return differences + [{"checks": checks}]


# ---------------------------------------------------------------------------------------------------------
# Category 2: the redistribute planner
# ---------------------------------------------------------------------------------------------------------

COLLECTIVES = {("S", "R"): "all_gather", ("S", "S"): "all_to_all", ("P", "R"): "all_reduce",
               ("P", "S"): "reduce_scatter", ("R", "S"): "chunk", ("R", "P"): "replicate_to_partial",
               ("S", "P"): "shard_to_partial"}

DTYPES = [("float32", 4), ("bfloat16", 2), ("float64", 8)]


def gen_state(rng, ndim, tdim):
    """Placements as ("R",) / ("S", d) / ("P", op), and each sharded dim's order of mesh axes."""
    base_op = rng.choice(["sum"] * 6 + ["avg", "max", "min"])
    placements = []
    for _ in range(ndim):
        x = rng.random()
        if x < 0.35:
            placements.append(("R",))
        elif x < 0.8:
            placements.append(("S", rng.randrange(tdim)))
        else:
            op = base_op
            if base_op in ("sum", "avg") and rng.random() < 0.2:
                op = rng.choice(["sum", "avg"])
            placements.append(("P", op))
    return placements, default_order(placements, rng, shuffle=rng.random() < 0.35)


def default_order(placements, rng=None, shuffle=False):
    order = {}
    for axis, p in enumerate(placements):
        if p[0] == "S":
            order.setdefault(p[1], []).append(axis)
    if shuffle:
        for axes in order.values():
            rng.shuffle(axes)
    return order


def gen_plan_case(rng, index):
    ndim = rng.choice([1, 2, 2, 3, 3, 3, 4])
    shape = []
    for _ in range(ndim):
        shape.append(rng.choice([s for s in (1, 2, 2, 2, 3, 4) if prod(shape) * s <= 64]))
    tdim = rng.choice([1, 2, 3]) if ndim < 4 else rng.choice([1, 2])
    tshape = [rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16]) for _ in range(tdim)]
    src, src_order = gen_state(rng, ndim, tdim)
    dst, dst_order = gen_state(rng, ndim, tdim)
    # P(a) -> P(b) on one axis is never a step: keep requests that have an answer (R is in no shard order)
    for axis in range(ndim):
        if src[axis][0] == "P" and dst[axis][0] == "P" and src[axis][1] != dst[axis][1]:
            dst[axis] = ("R",)
    names = rng.sample(AXIS_NAMES, ndim)
    rank = rng.randrange(prod(shape))
    dtype, itemsize = rng.choice(DTYPES)
    flattened = None
    if ndim >= 2 and rng.random() < 0.35:
        k = rng.randint(2, ndim)
        flattened = sorted(rng.sample(range(ndim), k)) if rng.random() < 0.5 else list(range(ndim - k, ndim))
    return {"index": index, "mesh": shape, "names": names, "tensor_shape": tshape,
            "src": src, "src_order": src_order, "dst": dst, "dst_order": dst_order,
            "rank": rank, "coordinate": unravel(rank, shape), "dtype": dtype, "itemsize": itemsize,
            "devices_per_host": rng.choice([1, 2, 4, 8]), "flattened": flattened}


def state_text(state, order):
    """PyTorch's text form of a state (DTensorSpec.format_shard_order_str): R, P(op), S(d), S(d)[k]."""
    out = ""
    for axis, p in enumerate(state):
        if p[0] == "R":
            out += "R"
        elif p[0] == "P":
            out += f"P({p[1]})"
        else:
            axes = order[p[1]]
            out += f"S({p[1]})" + (f"[{axes.index(axis)}]" if len(axes) > 1 else "")
    return out


def is_default_order(order):
    return all(axes == sorted(axes) for axes in order.values())


class PlanTorch:
    """Builds specs and asks the installed torch's planner."""

    def __init__(self, T):
        import torch.distributed.tensor._redistribute as redis
        from torch.distributed.device_mesh import _mesh_resources
        from torch.distributed.tensor._collective_utils import MeshTopoInfo
        from torch.distributed.tensor._dtensor_spec import DTensorSpec, ShardOrderEntry, TensorMeta
        from torch.distributed.tensor.placement_types import Partial, Replicate, Shard
        self.T, self.redis, self.mesh_resources, self.MeshTopoInfo = T, redis, _mesh_resources, MeshTopoInfo
        self.DTensorSpec, self.ShardOrderEntry, self.TensorMeta = DTensorSpec, ShardOrderEntry, TensorMeta
        self.Partial, self.Replicate, self.Shard = Partial, Replicate, Shard
        self.has_graph = hasattr(redis, "DTensorRedistributePlanner")
        self.has_optimize = hasattr(redis, "_optimize_transform_infos")
        logging.getLogger("torch.distributed.tensor._redistribute").setLevel(logging.ERROR)

    def placements(self, state):
        out = []
        for p in state:
            out.append(self.Replicate() if p[0] == "R" else self.Shard(p[1]) if p[0] == "S" else self.Partial(p[1]))
        return tuple(out)

    def shard_order(self, order):
        return tuple(self.ShardOrderEntry(tensor_dim=d, mesh_dims=tuple(axes)) for d, axes in sorted(order.items()))

    def set_devices_per_host(self, n):
        # The comm model's host size comes from the device count of the mesh's device type (1 for "cpu"
        # here); pin it to the case's value, as our request's "devices_per_host" does.
        self.mesh_resources.num_devices_per_host = lambda device_type: n
        self.MeshTopoInfo.build_from_mesh.cache_clear()

    def setup(self, case):
        T = self.T
        T.init_rank(case["rank"], prod(case["mesh"]))
        mesh = T.init_device_mesh("cpu", tuple(case["mesh"]), mesh_dim_names=tuple(case["names"]))
        if case["flattened"] is not None:
            mesh[tuple(case["names"][i] for i in case["flattened"])]._flatten()
        self.set_devices_per_host(case["devices_per_host"])
        dtype = getattr(T.torch, case["dtype"])
        shape = T.torch.Size(case["tensor_shape"])
        stride = tuple(prod(case["tensor_shape"][i + 1:]) for i in range(len(shape)))
        meta = self.TensorMeta(shape, stride, dtype)
        src = self.DTensorSpec(mesh, self.placements(case["src"]), tensor_meta=meta,
                               shard_order=self.shard_order(case["src_order"]))
        dst = self.DTensorSpec(mesh, self.placements(case["dst"]), tensor_meta=meta,
                               shard_order=self.shard_order(case["dst_order"]))
        return mesh, meta, src, dst

    def plan(self, case, mode):
        """torch's plan for `mode` ("auto": its default, "graph", "greedy") as our answer's fields."""
        redis = self.redis
        mesh, meta, src, dst = self.setup(case)
        if mesh.get_coordinate() is None or list(mesh.get_coordinate()) != case["coordinate"]:
            raise AssertionError(f"rank {case['rank']} has coordinate {mesh.get_coordinate()} in torch")
        flag = {"auto": None, "graph": True, "greedy": False}[mode]
        redis.clear_redistribute_planner_cache()  # planners are cached and remember the reduce ops they saw
        infos = redis._gen_transform_infos_non_cached(src, dst, use_graph_based_transform=flag)
        used_graph = flag is True or not (is_default_order(case["src_order"]) and is_default_order(case["dst_order"]))
        cost = self.path_cost(mesh, meta, src, infos)
        merged = infos
        if self.has_optimize:
            merged = redis._optimize_transform_infos(infos, mesh, src.placements, dst.placements)
        trace, trace_unmerged = (self.trace(mesh, src, ts) for ts in (merged, infos))
        steps = []
        for info in merged:
            a, b = info.src_dst_placements
            flat = type(info).__name__ == "_FlattenedTransformInfo"
            steps.append({"axes": list(info.original_mesh_dims) if flat else [info.mesh_dim],
                          "collective": COLLECTIVES.get((kind(a), kind(b)), f"{a}->{b}"),
                          "from": str(a), "to": str(b), "logical_shape": list(info.logical_shape), "merged": flat})
        return {"ok": True, "cost": cost, "trace": trace, "steps": steps, "used_graph": used_graph,
                "trace_unmerged": trace_unmerged}

    def trace(self, mesh, src, infos):
        try:
            return self.redis.DTensorRedistributePlanner.stringify_transform_infos(
                mesh, infos, src.placements, src.shard_order)
        except ValueError:
            # torch's greedy planner ignores shard order; its trace helper (used by its debug mode only)
            # cannot replay a plan that moves an axis which is not the last of its dim's order
            return None

    def path_cost(self, mesh, meta, src, infos):
        """The comm-model cost of torch's path: its planner's own cost function, edge by edge in path order."""
        redis = self.redis
        planner = redis.get_redistribute_planner(mesh, meta)
        placements = list(src.placements)
        order = redis.DTensorRedistributePlanner._ShardOrder_to_dict(src.shard_order)
        state = redis.DTensorRedistributePlanner.DistState(tuple(placements), src.shard_order)
        cost = 0.0
        try:
            for info in infos:
                redis._update_shard_order_and_placements(info, placements, order)
                nxt = redis.DTensorRedistributePlanner.DistState(
                    tuple(placements), redis.DTensorRedistributePlanner._dict_to_ShardOrder(order))
                cost += planner.cost_function(state, nxt)
                state = nxt
        except Exception:  # noqa: BLE001 - a path torch cannot replay (greedy S->P): no cost to compare
            return None
        return cost


def kind(placement):
    if placement.is_shard():
        return "S"
    if placement.is_partial():
        return "P"
    return "R"


def plan_request(case, mode):
    partial_ops = {p[1] for p in case["src"] + case["dst"] if p[0] == "P"}
    # variant: "seed" has only R -> P(sum) edges and no S -> P(sum) edge; "newest" adds R -> P(op) for the
    # request's ops and S -> P(sum). This torch has R -> P(op) for the request's ops and no S -> P edge: with
    # sum-only requests that is exactly "seed" (an R -> P(sum) edge never lies on a cheapest path otherwise).
    variant = "seed" if partial_ops <= {"sum"} else "newest"
    req = {"mesh": case["mesh"], "tensor_shape": case["tensor_shape"],
           "src": state_text(case["src"], case["src_order"]), "dst": state_text(case["dst"], case["dst_order"]),
           "planner": mode, "variant": variant, "cost_model": "comm", "itemsize": case["itemsize"],
           "devices_per_host": case["devices_per_host"], "names": case["names"], "coordinate": case["coordinate"]}
    if case["flattened"] is not None:
        req["flattened"] = [case["flattened"]]
    return req


def compare_plans(ours, theirs, mode_used_graph):
    """Differences between our answer and torch's, as a list of strings (empty when they agree)."""
    if not theirs["ok"] or not ours.get("ok"):
        if not theirs["ok"] and not ours.get("ok"):
            return []  # both refuse the request
        return [f"ok: meshloom {ours.get('ok')} ({ours.get('error', '')}), torch {theirs['ok']} "
                f"({theirs.get('error', '')})"]
    out = []
    if theirs["trace"] is not None and ours["trace"] != theirs["trace"]:
        out.append(f"trace: meshloom {ours['trace']}  torch {theirs['trace']}")
    if len(ours["steps"]) != len(theirs["steps"]):
        out.append(f"steps: meshloom {len(ours['steps'])}, torch {len(theirs['steps'])}")
    else:
        for i, (a, b) in enumerate(zip(ours["steps"], theirs["steps"])):
            for field in ("collective", "from", "to", "merged"):
                if a[field] != b[field]:
                    out.append(f"step {i} {field}: meshloom {a[field]}, torch {b[field]}")
            if sorted(a["axes"]) != sorted(b["axes"]):
                out.append(f"step {i} axes: meshloom {a['axes']}, torch {b['axes']}")
            la, lb = a["logical_shape"], b["logical_shape"]
            if mode_used_graph:
                if la != lb:
                    out.append(f"step {i} logical_shape: meshloom {la}, torch {lb}")
            else:
                # torch's greedy planner takes each axis' logical shape from the SOURCE placements of the axes
                # before it; only the dims its collective pads are used (gather: the shard dim; all_to_all:
                # both dims), so only those are compared.
                dims = []
                if b["collective"] in ("all_gather", "all_to_all"):
                    dims.append(int(b["from"][2:-1]))
                if b["collective"] == "all_to_all":
                    dims.append(int(b["to"][2:-1]))
                for d in dims:
                    if len(la) != len(lb) or la[d] != lb[d]:
                        out.append(f"step {i} logical_shape[{d}]: meshloom {la}, torch {lb}")
    if theirs["cost"] is not None and not math.isclose(ours["cost"], theirs["cost"], rel_tol=1e-9, abs_tol=1e-12):
        out.append(f"cost: meshloom {ours['cost']!r}, torch {theirs['cost']!r}")
    return out


STATE_TOKEN = re.compile(r"R|P\((\w+)\)|S\((\d+)\)(?:\[(\d+)\])?")


def parse_state(text):
    """A state's text form -> {dim: [mesh axes in shard order]}."""
    order = {}
    for axis, m in enumerate(STATE_TOKEN.finditer(text)):
        if m.group(2) is not None:
            order.setdefault(int(m.group(2)), []).append((int(m.group(3) or 0), axis))
    return {d: [a for _, a in sorted(v)] for d, v in order.items()}


def chunk_sizes(size, n):
    """torch.chunk piece sizes of `size` split `n` ways."""
    c = -(-size // n)
    return [max(0, min(size, (i + 1) * c) - i * c) for i in range(n)]


def uneven_merge(case, theirs):
    """Whether torch merged an all_gather / reduce_scatter run whose dim does not divide evenly over the
    flattened group on every rank (Meshloom keeps such runs as separate steps: docs/04-planner.md, simulator)."""
    states = re.split(r"-->|->", theirs["trace"] or "")
    for i, step in enumerate(theirs["steps"]):
        if not step["merged"] or step["collective"] not in ("all_gather", "reduce_scatter") or i >= len(states):
            continue
        dim = int((step["from"] if step["collective"] == "all_gather" else step["to"])[2:-1])
        group = prod(case["mesh"][a] for a in step["axes"])
        extents = {case["tensor_shape"][dim]}
        for axis in parse_state(states[i]).get(dim, []):
            if axis not in step["axes"]:
                extents = {c for e in extents for c in chunk_sizes(e, case["mesh"][axis])}
        if any(e % group for e in extents):
            return True
    return False


def same_up_to_unit_axes(a, b, mesh):
    """Whether two state texts have the same placements and shard orders once axes of size 1 are left out of the
    orders (an axis of size 1 splits nothing, wherever it sits in an order)."""
    strip = [re.sub(r"\[\d+\]", "", t) for t in (a, b)]
    if strip[0] != strip[1]:
        return False
    orders = [{d: [x for x in axes if mesh[x] > 1] for d, axes in parse_state(t).items()} for t in (a, b)]
    return orders[0] == orders[1]


def only_unit_axis_differences(case, ours, theirs, diffs):
    """Whether every difference is confined to axes of size 1: the greedy trace differs in its last state only,
    which matches ours up to where size-1 axes sit in a shard order, and a logical shape differs only on a step
    whose axes all have size 1 (such a step moves nothing)."""
    if not ours.get("ok") or not theirs.get("ok"):
        return False
    for d in diffs:
        if d.startswith("trace:"):
            ta = re.split(r"-->|->", ours["trace"])
            tb = re.split(r"-->|->", theirs["trace"] or "")
            if len(ta) != len(tb) or ta[:-1] != tb[:-1] or not same_up_to_unit_axes(ta[-1], tb[-1], case["mesh"]):
                return False
            continue
        m = re.match(r"step (\d+) logical_shape", d)
        if m and all(case["mesh"][x] == 1 for x in theirs["steps"][int(m.group(1))]["axes"]):
            continue
        return False
    return True


def explain_plan_difference(case, ours, theirs, diffs):
    """A documented, deliberate difference between Meshloom and this torch version, or None."""
    our_steps = ours.get("steps", []) if ours.get("ok") else []
    torch_steps = theirs.get("steps", []) if theirs.get("ok") else []
    if not theirs.get("used_graph", True) and only_unit_axis_differences(case, ours, theirs, diffs):
        return ("torch's greedy plan differs only on axes of size 1: it ends in the target up to where a size-1 axis "
                "sits in a shard order (the same layout), which Meshloom names as the target, or it takes a "
                "size-1 axis' logical shape from the source placements (the step moves nothing; "
                "docs/04-planner.md, 'Greedy and auto')")
    if our_steps and not any(s["merged"] for s in our_steps) and ours["trace"] == theirs.get("trace_unmerged") \
            and uneven_merge(case, theirs):
        return ("torch merges an all_gather / reduce_scatter run on a flattened group although the dim does not "
                "divide evenly over it on every rank (its padded collective then mixes padding into the data); "
                "Meshloom keeps the steps separate (docs/04-planner.md, 'Proving a plan: the simulator')")
    torch_s2p = [s for s in torch_steps if s["collective"] == "shard_to_partial"]
    if any(s["collective"] == "shard_to_partial" for s in our_steps) and not torch_s2p:
        return ("Meshloom's 'newest' variant has the local S(d) -> P(sum) step (PyTorch PR 191828, newer than "
                "this torch; shared/reference/redistribute.md 'Upstream changes', docs/04-planner.md case +)")
    if torch_s2p:
        # torch's greedy planner emits S -> P steps; its executor refuses them at run time ("redistribute
        # from S(0) to P(sum) not supported yet") and its cost model prices them at infinity.
        if ours.get("ok") and all(d.startswith("cost:") for d in diffs) and theirs.get("cost") == math.inf:
            return ("torch's greedy plan has an S -> P(sum) step that its cost model prices at infinity and its "
                    "executor refuses; Meshloom runs it as the local shard_to_partial step (cost 0)")
        if not ours.get("ok") and "is not supported" in ours.get("error", "") and \
                any(s["to"] != "P(sum)" for s in torch_s2p):
            return ("torch's greedy plan has an S -> P(op != sum) step that its executor refuses at run time; "
                    "Meshloom refuses the request up front")
    return None


def run_plan_category(T, launcher, args, rng):
    pt = PlanTorch(T)
    modes = [("auto", "plan auto", "torch's default (_gen_transform_infos_non_cached with "
              "use_graph_based_transform=None: greedy, the graph when a shard order is not the default) "
              "against planner \"auto\"")]
    if pt.has_graph:
        modes.append(("graph", "plan graph", "use_graph_based_transform=True (Dijkstra) against planner \"graph\""))
    modes.append(("greedy", "plan greedy", "use_graph_based_transform=False against planner \"greedy\" "
                  "(requests with default shard orders only)"))
    cats = {m: Category(name, title) for m, name, title in modes}
    cases = [gen_plan_case(rng, i) for i in range(args.cases)]
    work = []  # (case, mode, request)
    for case in cases:
        for m, _, _ in modes:
            if m == "greedy" and not (is_default_order(case["src_order"]) and is_default_order(case["dst_order"])):
                continue
            work.append((case, m, plan_request(case, m)))
    answers = run_launcher(launcher, "plan", [req for _, _, req in work])
    start = time.time()
    for (case, mode, req), ours in zip(work, answers):
        cat = cats[mode]
        if args.max_seconds and time.time() - start > args.max_seconds:
            cat.stopped_early = True
            continue
        progress(cat, start)
        try:
            theirs = pt.plan(case, mode)
        except Exception as e:  # noqa: BLE001 - torch refusing the request is an answer too
            theirs = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"}
        used_graph = theirs.get("used_graph", mode == "graph")
        cat.checks += 1
        diffs = compare_plans(ours, theirs, used_graph)
        differences = []
        if diffs:
            d = {"differences": diffs, "meshloom": ours, "torch": theirs}
            why = explain_plan_difference(case, ours, theirs, diffs)
            if why:
                d["explained"] = why
            differences.append(d)
        cat.add({"case": case, "request": req}, differences)
    T.close()
    return list(cats.values())


# ---------------------------------------------------------------------------------------------------------

def compact(x, limit=1500):
    text = json.dumps(x, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def print_mismatch(item):
    diffs = [d for d in item["differences"] if not d.get("explained")] or item["differences"]
    if "src" in item["case"]:  # plan: the request says it all
        print(f"request: {compact(item['request'])}")
        print(f"torch: rank {item['case']['rank']} of init_device_mesh('cpu', {tuple(item['case']['mesh'])})")
        for d in diffs:
            for line in d["differences"]:
                print(f"  {line}")
            for side in ("meshloom", "torch"):
                ans = d[side]
                if ans.get("ok"):
                    steps = "; ".join(f"axes {st['axes']} {st['collective']} {st['from']}->{st['to']} "
                                      f"{st['logical_shape']}" + (" merged" if st["merged"] else "")
                                      for st in ans["steps"])
                    print(f"    {side}: cost {ans['cost']!r}, trace {ans['trace']}, steps: {steps or 'none'}")
                else:
                    print(f"    {side}: {ans.get('error')}")
        return
    case = {k: v for k, v in item["case"].items() if k != "index"}
    print(f"case: {compact(case)}  (the request line is in --report)")
    by_probe = {}
    for d in diffs:
        by_probe.setdefault(d["probe"], []).append(d)
    for label, ds in list(by_probe.items())[:8]:
        d = ds[0]
        more = f" (and {len(ds) - 1} more ranks)" if len(ds) > 1 else ""
        print(f"  {label}, rank {d.get('rank')}{more}:")
        if "error" in d:
            print(f"    script error: {d['error']}")
        else:
            print(f"    meshloom: {compact(d.get('meshloom'), 400)}")
            print(f"    torch:    {compact(d.get('torch'), 400)}")
    if len(by_probe) > 8:
        print(f"  ... and {len(by_probe) - 8} more probes that differ (see --report)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--launcher", required=True, help="the meshloom-launch binary")
    ap.add_argument("--cases", type=int, default=300, help="random cases per category (default 300)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--report", help="write a JSON report to this file")
    ap.add_argument("--only", choices=["mesh", "plan"], help="run one category only")
    ap.add_argument("--show", type=int, default=3, help="mismatches printed in full per category (default 3)")
    ap.add_argument("--strict", action="store_true", help="count documented deviations as mismatches")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="per category: stop starting torch cases after this many seconds (0: no limit)")
    args = ap.parse_args()

    try:
        T = Torch()
    except Exception as e:  # noqa: BLE001 - ImportError, or a torch built without distributed
        print(f"skip: torch is not importable here ({type(e).__name__}: {e})")
        return SKIP
    warnings.filterwarnings("ignore")
    logging.getLogger("torch.distributed").setLevel(logging.ERROR)

    print(f"meshloom differential test: torch {T.version}, seed {args.seed}, {args.cases} cases per category, "
          f"launcher {args.launcher}")
    t0 = time.time()
    categories = []
    try:
        if args.only in (None, "mesh"):
            categories += run_mesh_category(T, args.launcher, args, random.Random(f"mesh-{args.seed}"))
        if args.only in (None, "plan"):
            categories += run_plan_category(T, args.launcher, args, random.Random(f"plan-{args.seed}"))
    except (OSError, RuntimeError) as e:
        print(f"error: {e}")
        return 2

    for cat in categories:
        print(cat.summary(args.strict))
        print(f"  compared: {cat.title}")
    for cat in categories:
        shown = cat.mismatch_cases + (cat.deviation_cases if args.strict else [])
        for n, item in enumerate(shown[:args.show], 1):
            print(f"\n--- {cat.name} mismatch {n} of {len(shown)} (case {item['case']['index']}) ---")
            print_mismatch(item)
        if cat.deviation_cases and not args.strict:
            reasons = {}
            for item in cat.deviation_cases:
                for d in item["differences"]:
                    reasons[d["explained"]] = reasons.get(d["explained"], 0) + 1
            print(f"\n{cat.name}: documented deviations (not counted as mismatches; --strict counts them):")
            for why, n in reasons.items():
                print(f"  {n} x {why}")
    print(f"\ntime: {time.time() - t0:.1f} s")

    if args.report:
        report = {"torch_version": T.version, "seed": args.seed, "cases": args.cases, "launcher": args.launcher,
                  "strict": args.strict, "seconds": round(time.time() - t0, 1),
                  "categories": {c.name: c.to_json(keep=200) for c in categories}}
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return 1 if any(c.failed(args.strict) for c in categories) else 0


if __name__ == "__main__":
    sys.exit(main())
