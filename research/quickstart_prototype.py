# ruff: noqa: T201  (a research script: its report is what it prints)
"""Prototype of the quickstart's LEAP/DAgger loop on BabyAI, in one process, on CPU.

Research code, not product code: it calls the project's BabyAI sessions in-process (no HTTP),
trains a tiny Llama with a plain torch loop and decodes greedily, to find a setting in which
one correction round beats both iteration 0 and a matched control. See research/FINDINGS.md.

Stages (wall and CPU seconds are printed for each):
  collect   expert episodes on train items -> (prompt, action) pairs (the BC data)
  bc        train a fresh model on them for --bc-steps                  -> iteration 0
  rollout   iteration 0 plays --dagger-items train items; the expert labels every state it visits
  control   the expert plays fresh train items until it has as many states as the rollout kept
  train     iteration 0 continued for --extra-steps on BC data + corrections  -> iteration 1
            iteration 0 continued for --extra-steps on BC data + control      -> control
  eval      iteration 0, control, iteration 1 on --eval-items held-out items

Items: item ``i`` is BabyAI level ``LEVELS[i % 40]`` with seed ``i // 40`` (the product's
numbering). Held-out items use seeds 0 .. eval_items-1, train items seeds from 1000 up.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.envs.babyai import PUT_NEXT_INSTRUCTION  # noqa: E402
from agentcli.envs.babyai.levels import AGENTGYM_LEVELS, LEVELS  # noqa: E402
from agentcli.envs.babyai.session import BabyAISession  # noqa: E402
from agentcli.envs.babyai.text import DIRECTION_VECTORS, object_name, objects_by_cell  # noqa: E402

TRAIN_SEED_START = 1000


# ----------------------------------------------------------------------------- observation
def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _relative(pose, cell) -> str:
    """Where ``cell`` is from the agent: '2 steps behind and 1 step to your left'."""
    (x, y), direction = pose
    fx, fy = DIRECTION_VECTORS[direction]
    rx, ry = -fy, fx
    dx, dy = cell[0] - x, cell[1] - y
    ahead, right = dx * fx + dy * fy, dx * rx + dy * ry
    parts = []
    if ahead:
        parts.append(f"{_steps(abs(ahead))} {'ahead' if ahead > 0 else 'behind'}")
    if right:
        parts.append(f"{_steps(abs(right))} to your {'right' if right > 0 else 'left'}")
    return " and ".join(parts)


def out_of_sight(session: BabyAISession) -> list[str]:
    """Objects of the grid the agent does not see now, nearest first, with where they are."""
    view, env = session._view, session._env
    (x, y), _ = view.pose
    hidden = [
        (abs(cx - x) + abs(cy - y), object_name(obj), (cx, cy))
        for (cx, cy), obj in objects_by_cell(env).items()
        if (cx, cy) not in view.names
    ]
    return [f"- {name}: {_relative(view.pose, cell)}" for _, name, cell in sorted(hidden)]


# The product's conversation opening (instruction and acknowledgement), for --opening
OPENING = (
    PUT_NEXT_INSTRUCTION + "\nOK. I'll follow your instructions and try my best to solve the task."
)


def prompt(session: BabyAISession, mission: str, history: list[str], args) -> str:
    """The student's whole input: goal, the env's scene text, [room listing], last actions."""
    lines = [OPENING] if args.opening else []
    lines += [f"Goal: {mission}", session._view.scene]
    if args.obs == "room":
        hidden = out_of_sight(session)
        lines += ["Out of sight:"] + hidden if hidden else ["Out of sight: nothing."]
    if args.history:
        last = history[-args.history :]
        lines.append("Last actions: " + (", ".join(last) if last else "none"))
    return "\n".join(lines) + "\nAction:"


# ----------------------------------------------------------------------------- episodes
def omniscient(session: BabyAISession) -> None:
    """Restart the session's bot with every cell marked seen: it then plans from the full
    grid, not from its memory of what it explored, so its choice is a function of the state."""
    import numpy as np

    expert = session._expert
    expert._bot = None
    expert._start(np.ones((session._env.width, session._env.height), dtype=bool))


@dataclass
class Episode:
    item: int
    session: BabyAISession
    mission: str
    history: list
    samples: list  # (prompt, expert action) for every state visited
    done: bool = False
    success: bool = False
    steps: int = 0


def start(item: int, args) -> Episode:
    session = BabyAISession(AGENTGYM_LEVELS)
    session.reset(item)
    if args.expert == "omniscient":
        omniscient(session)
    return Episode(item, session, session._env.mission, [], [])


def play(items, args, model=None, tokenizer=None, label=True, beta=0.0, rng=None):
    """Run episodes in lockstep batches: the model acts (the expert when model is None, or with
    probability beta); with ``label`` the expert's action is recorded at every state."""
    episodes = []
    for lo in range(0, len(items), args.batch_episodes):
        batch = [start(i, args) for i in items[lo : lo + args.batch_episodes]]
        for _ in range(args.max_rounds):
            live = [e for e in batch if not e.done]
            if not live:
                break
            prompts = [prompt(e.session, e.mission, e.history, args) for e in live]
            ask = label or model is None
            experts = [e.session.expert_action() if ask else None for e in live]
            chosen = experts if model is None else generate(model, tokenizer, prompts)
            for e, p, expert, action in zip(live, prompts, experts, chosen, strict=True):
                if model is not None and beta and rng.random() < beta and expert:
                    action = expert
                if label and expert:
                    e.samples.append((p, expert, action))
                if action is None:
                    e.done = True
                    continue
                tr = e.session.step(action)
                e.history.append(action)
                e.steps += 1
                e.done, e.success = tr.done, tr.success
        for e in batch:
            e.session.close()
            e.session = None
        episodes += batch
    return episodes


# ----------------------------------------------------------------------------- model
def build(texts, args):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from agentcli.models import train_tokenizer

    if args.product_tokenizer:  # `agentgym model tiny`'s: trained on the envs' instructions
        from agentcli.models import tokenizer_corpus

        texts = tokenizer_corpus()
    tokenizer = train_tokenizer(texts, args.vocab)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 4,
        num_hidden_layers=args.layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=1024,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(args.seed)
    return LlamaForCausalLM(config), tokenizer


def encode(samples, tokenizer):
    """Token ids and loss mask (on the action and end of turn only) per (prompt, action)."""
    eos = tokenizer.eos_token_id
    prompts = tokenizer([p for p, _ in samples], add_special_tokens=False)["input_ids"]
    actions = tokenizer([" " + a for _, a in samples], add_special_tokens=False)["input_ids"]
    return [(p + a + [eos], len(p)) for p, a in zip(prompts, actions, strict=True)]


def train(model, tokenizer, samples, steps, args, rng):
    """AdamW, linear warm-up then cosine decay, random batches padded to their longest row."""
    import torch

    data = encode(samples, tokenizer)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)),
    )
    model.train()
    pad = tokenizer.pad_token_id
    tokens = 0
    for step in range(steps):
        rows = [data[rng.randrange(len(data))] for _ in range(args.batch)]
        width = max(len(ids) for ids, _ in rows)
        ids = torch.full((len(rows), width), pad)
        labels = torch.full((len(rows), width), -100)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, (row, n_prompt) in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row)
            labels[r, n_prompt : len(row)] = torch.tensor(row[n_prompt:])
            mask[r, : len(row)] = 1
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        tokens += int(mask.sum())
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            print(f"    step {step} loss {loss.item():.3f}", flush=True)
    model.eval()
    return tokens


def generate(model, tokenizer, prompts):
    import torch

    enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        out = model.generate(
            **enc,
            max_new_tokens=10,
            do_sample=False,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    texts = tokenizer.batch_decode(out[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
    return [t.strip() for t in texts]


# ----------------------------------------------------------------------------- stages
class Clock:
    def __init__(self):
        self.rows = []

    def stage(self, name):
        clock = self

        class _Timer:
            def __enter__(self):
                self.wall, self.cpu = time.perf_counter(), time.process_time()
                print(f"[{name}] ...", flush=True)

            def __exit__(self, *exc):
                wall = time.perf_counter() - self.wall
                cpu = time.process_time() - self.cpu
                clock.rows.append((name, wall, cpu))
                print(f"[{name}] wall {wall:.1f}s cpu {cpu:.1f}s", flush=True)

        return _Timer()


def success(episodes):
    n = len(episodes)
    p = sum(e.success for e in episodes) / n
    return p, math.sqrt(p * (1 - p) / n), n


def paired(a, b):
    """Mean difference b - a over the same items and its standard error (paired)."""
    d = [int(y.success) - int(x.success) for x, y in zip(a, b, strict=True)]
    n = len(d)
    m = sum(d) / n
    var = sum((v - m) ** 2 for v in d) / (n - 1)
    return m, math.sqrt(var / n)


def select(episodes, keep, cap=0):
    """The labelled student states a round keeps: all of them, those where the student
    disagreed with the expert, or all states of failed episodes; at most ``cap`` per episode
    (the first ones: where the episode went wrong)."""
    kept = []
    for e in episodes:
        if keep == "wrong":
            chosen = [(p, a) for p, a, mine in e.samples if mine != a]
        elif keep == "failed":
            chosen = [] if e.success else [(p, a) for p, a, _ in e.samples]
        else:
            chosen = [(p, a) for p, a, _ in e.samples]
        kept += chosen[: int(cap)] if int(cap) else chosen
    return kept


def items_for(levels, seeds):
    return [seed * len(LEVELS) + level for seed in seeds for level in levels]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--levels", default="4", help="level indices into LEVELS, comma-separated")
    ap.add_argument("--obs", choices=["ego", "room"], default="room")
    ap.add_argument("--expert", choices=["bot", "omniscient"], default="omniscient")
    ap.add_argument("--history", type=int, default=2, help="last actions shown in the prompt")
    ap.add_argument("--opening", action="store_true", help="prompts start with the instruction")
    ap.add_argument("--product-tokenizer", action="store_true", help="agentgym model tiny's")
    ap.add_argument("--demos", type=int, default=500, help="expert episodes for BC")
    ap.add_argument("--dagger-items", type=int, default=500, help="student episodes per round")
    ap.add_argument(
        "--keep",
        choices=["all", "wrong", "failed"],
        default="all",
        help="student states kept: all, where it disagreed with the expert, "
        "or all states of failed episodes",
    )
    ap.add_argument("--cap", type=int, default=0, help="max corrections kept per episode (0: all)")
    ap.add_argument(
        "--also",
        default="",
        help="more selections to train from iteration 0 "
        "after the first rollout, as KEEP:CAP, comma-separated (e.g. wrong:0,all:4)",
    )
    ap.add_argument("--beta", type=float, default=0.0, help="chance the expert acts in rollouts")
    ap.add_argument("--iters", type=int, default=1)
    ap.add_argument("--bc-steps", type=int, default=600)
    ap.add_argument("--extra-steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--eval-items", type=int, default=100)
    ap.add_argument("--max-rounds", type=int, default=20)
    ap.add_argument("--batch-episodes", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="write a JSON summary here")
    args = ap.parse_args(argv)
    args.also = [v for v in args.also.split(",") if v]

    import copy

    import torch

    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    levels = [int(v) for v in args.levels.split(",")]
    per_level = lambda n: math.ceil(n / len(levels))  # noqa: E731
    train_seeds = iter(range(TRAIN_SEED_START, 10**6))
    next_items = lambda n: items_for(levels, [next(train_seeds) for _ in range(per_level(n))])  # noqa: E731
    eval_items = items_for(levels, range(per_level(args.eval_items)))
    clock = Clock()
    print(json.dumps(vars(args), default=str))

    with clock.stage("collect"):
        demos = play(next_items(args.demos), args)
        bc = [(p, a) for e in demos for p, a, _ in e.samples]
        print(
            f"    {len(demos)} expert episodes, success {success(demos)[0]:.2f}, {len(bc)} states"
        )
    example = bc[0][0] + " " + bc[0][1]
    print("---- example sample ----\n" + example + "\n------------------------")

    with clock.stage("bc"):
        model, tokenizer = build([p + " " + a for p, a in bc], args)
        n_params = sum(p.numel() for p in model.parameters())
        lengths = [len(ids) for ids, _ in encode(bc, tokenizer)]
        print(
            f"    model {n_params / 1e6:.2f}M params, vocab {len(tokenizer)}, "
            f"sample tokens mean {sum(lengths) / len(lengths):.0f} max {max(lengths)}"
        )
        train(model, tokenizer, bc, args.bc_steps, args, rng)
    results = {}
    with clock.stage("eval iter0"):
        ev0 = play(eval_items, args, model, tokenizer, label=False)
        results["iter0"] = ev0
        print("    iter0 success {:.3f} ± {:.3f} (n={})".format(*success(ev0)))

    variants: dict = {}
    student, control = model, copy.deepcopy(model)
    data_student, data_control = list(bc), list(bc)
    for it in range(1, args.iters + 1):
        with clock.stage(f"rollout {it}"):
            eps = play(
                next_items(args.dagger_items), args, student, tokenizer, beta=args.beta, rng=rng
            )
            kept = select(eps, args.keep, args.cap)
            total = sum(len(e.samples) for e in eps)
            disagree = sum(mine != a for e in eps for _, a, mine in e.samples)
            print(
                f"    student train success {success(eps)[0]:.2f}; states {total}, "
                f"disagreeing {disagree}; kept {len(kept)}"
            )
            if it == 1:
                start_model = copy.deepcopy(student)
                variants = {v: select(eps, *v.split(":")) for v in args.also}
        with clock.stage(f"control {it}"):
            extra = []
            while len(extra) < len(kept):
                for e in play(next_items(100), args):
                    extra += [(p, a) for p, a, _ in e.samples]
            extra = extra[: len(kept)]
        data_student += kept
        data_control += extra
        with clock.stage(f"train iter{it}"):
            train(student, tokenizer, data_student, args.extra_steps, args, rng)
        with clock.stage(f"train control{it}"):
            train(control, tokenizer, data_control, args.extra_steps, args, rng)

    for v, states in variants.items():
        if len(states) > len(kept):
            states = rng.sample(states, len(kept))
        with clock.stage(f"train iter1 {v}"):
            m = copy.deepcopy(start_model)
            train(m, tokenizer, bc + states, args.extra_steps, args, rng)
        with clock.stage(f"eval iter1 {v}"):
            results[f"iter1 {v} ({len(states)})"] = play(
                eval_items, args, m, tokenizer, label=False
            )

    if args.iters:
        with clock.stage("eval control"):
            evc = play(eval_items, args, control, tokenizer, label=False)
            results["control"] = evc
        with clock.stage(f"eval iter{args.iters}"):
            ev1 = play(eval_items, args, student, tokenizer, label=False)
            results[f"iter{args.iters}"] = ev1

    print("\n==== results ====")
    summary = {"args": vars(args), "results": {}, "times": clock.rows}
    for name, eps in results.items():
        p, se, n = success(eps)
        steps = sum(e.steps for e in eps) / n
        print(f"{name:8s} success {p:.3f} ± {se:.3f} (n={n}), mean actions {steps:.1f}")
        summary["results"][name] = {"success": p, "se": se, "n": n}
    pairs = [("iter0", "control")] * bool(args.iters) + [
        (a, b)
        for b in results
        if b.startswith("iter") and b != "iter0"
        for a in ("iter0", "control")
    ]
    for a, b in pairs:
        d, se = paired(results[a], results[b])
        print(f"{b} - {a}: {d:+.3f} ± {se:.3f} (paired)")
        summary["results"][f"{b}-{a}"] = {"diff": d, "se": se}
    wall = sum(w for _, w, _ in clock.rows)
    cpu = sum(c for _, _, c in clock.rows)
    print(f"total wall {wall:.0f}s cpu {cpu:.0f}s")
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1, default=str))


if __name__ == "__main__":
    main()
