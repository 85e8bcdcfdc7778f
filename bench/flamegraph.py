#!/usr/bin/env python3
"""Renders `perf script` output as a flame graph (SVG), with no tool beyond
Python: the usual FlameGraph scripts are not among Debian's packages.

    perf record -g -p PID -- sleep 10
    perf script | bench/flamegraph.py --title "gateway, open loop 50k/s" > flame.svg

Each sample's stack (root at the bottom) becomes a column of frames; equal
prefixes merge, so a frame's width is the share of samples that passed
through it. Frames are coloured by where they run: kernel (orange), the
framegate binaries (green), libraries (blue). Hover a frame for its name and
share. Stacks are grouped by command name (the first frame) unless --no-comm.
"""

import argparse
import html
import re
import sys
from collections import defaultdict

# A `perf script` sample header line: "comm  pid [cpu] time: period event:".
HEADER = re.compile(r"^(\S.*?)\s+\d+(?:/\d+)?\s")
# A stack frame line: "\t address symbol+off (dso)".
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.+?)\s+\((.*)\)\s*$")


def clean_symbol(sym: str) -> str:
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    return sym


def collapse(lines, by_comm=True):
    """{(frame, ...): samples}, root first."""
    stacks = defaultdict(int)
    comm, frames = None, []

    def flush():
        if comm is not None and frames:
            stack = tuple(reversed(frames))
            stacks[((comm,) + stack) if by_comm else stack] += 1

    for line in lines:
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line[0].isspace():
            flush()
            m = HEADER.match(line)
            comm, frames = (m.group(1).strip() if m else line.split()[0]), []
            continue
        m = FRAME.match(line)
        if m:
            sym, dso = m.group(1), m.group(2)
            name = clean_symbol(sym) if sym != "[unknown]" else f"[{dso.rsplit('/', 1)[-1]}]"
            frames.append((name, dso))
    flush()
    return stacks


class Node:
    __slots__ = ("name", "dso", "count", "children")

    def __init__(self, name, dso=""):
        self.name, self.dso, self.count, self.children = name, dso, 0, {}


def build_tree(stacks):
    root = Node("all")
    for stack, n in stacks.items():
        root.count += n
        node = root
        for frame in stack:
            name, dso = frame if isinstance(frame, tuple) else (frame, "")
            child = node.children.get(name)
            if child is None:
                child = node.children[name] = Node(name, dso)
            child.count += n
            node = child
    return root


def colour(node) -> str:
    dso = node.dso
    if "kernel" in dso or node.name.startswith(("entry_SYSCALL", "__x64_sys", "do_syscall")):
        return "rgb(235,140,60)"
    if "framegate" in dso or node.name.startswith("fg::"):
        return "rgb(110,190,90)"
    if dso:
        return "rgb(110,150,220)"
    return "rgb(200,200,200)"


def render(root, title, width=1200, row=16, min_width=0.3):
    depth = [0]

    def measure(node, d):
        depth[0] = max(depth[0], d)
        for c in node.children.values():
            measure(c, d + 1)

    measure(root, 0)
    height = (depth[0] + 1) * row + 50
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15">{html.escape(title)}</text>',
           f'<text x="10" y="{height - 8}" font-size="10">{root.count} samples; width = share of samples; '
           f'orange kernel, green framegate, blue libraries</text>']
    scale = (width - 20) / max(1, root.count)

    def draw(node, x, d):
        w = node.count * scale
        if w < min_width:
            return
        y = height - 30 - (d + 1) * row
        share = 100.0 * node.count / max(1, root.count)
        label = html.escape(node.name)
        out.append(f'<g><title>{label} ({node.count} samples, {share:.2f}%)</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{row - 1}" fill="{colour(node)}" '
                   f'rx="2"/>')
        chars = int(w / 6.6)
        if chars >= 3:
            text = node.name if len(node.name) <= chars else node.name[:chars - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + row - 4}">{html.escape(text)}</text>')
        out.append("</g>")
        cx = x
        for c in sorted(node.children.values(), key=lambda c: c.name):
            draw(c, cx, d + 1)
            cx += c.count * scale

    draw(root, 10, 0)
    out.append("</svg>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--title", default="flame graph")
    ap.add_argument("--no-comm", action="store_true", help="do not group stacks by command name")
    ap.add_argument("--comm", action="append", default=[],
                    help="keep only samples of this command (repeatable; perf truncates names to 15 chars)")
    ap.add_argument("input", nargs="?", help="perf script output (default: stdin)")
    args = ap.parse_args()
    lines = open(args.input) if args.input else sys.stdin
    stacks = collapse(lines, by_comm=not args.no_comm or bool(args.comm))
    if args.comm:
        stacks = {s: n for s, n in stacks.items() if s[0] in args.comm}
        if args.no_comm:
            stacks = {s[1:]: n for s, n in stacks.items()}
    if not stacks:
        sys.exit("flamegraph.py: no samples with stacks in the input (perf record -g?)")
    sys.stdout.write(render(build_tree(stacks), args.title))


if __name__ == "__main__":
    main()
