"""Reads a Dockerfile and a .dockerignore the way `docker build` does, as far
as the deploy tests need: instructions per stage (continuations joined,
ARG defaults before the first FROM substituted), and which context paths
the ignore file excludes (moby's rules: patterns relative to the context
root, `*` and `?` within one path element, `**` across any number, a `!`
pattern re-includes, the last matching pattern decides, a path is excluded
with its directory).
"""

from __future__ import annotations

import dataclasses
import re
import shlex


@dataclasses.dataclass
class Instruction:
    keyword: str  # upper case
    args: str
    line: int


@dataclasses.dataclass
class Stage:
    image: str
    name: str
    instructions: list[Instruction]

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


@dataclasses.dataclass
class Copy:
    sources: list[str]
    destination: str
    from_stage: str | None


def instructions(text: str) -> list[Instruction]:
    result = []
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # a comment line inside a continued instruction
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, args = (pending + stripped).partition(" ")
        result.append(Instruction(keyword.upper(), args.strip(), start))
        pending = ""
    return result


def _substitute(value: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m[1] or m[2], m[0]), value)


def stages(text: str) -> list[Stage]:
    global_args: dict[str, str] = {}
    result: list[Stage] = []
    for ins in instructions(text):
        if ins.keyword == "ARG" and not result:
            name, _, default = ins.args.partition("=")
            global_args[name] = default
        elif ins.keyword == "FROM":
            words = _substitute(ins.args, global_args).split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(result))
            result.append(Stage(words[0], name, []))
        elif result:
            result[-1].instructions.append(ins)
    return result


def copy_args(ins: Instruction) -> Copy:
    words = shlex.split(ins.args)
    flags = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    from_stage = next((f.split("=", 1)[1] for f in flags if f.startswith("--from=")), None)
    return Copy(paths[:-1], paths[-1], from_stage)


def apt_packages(ins: Instruction) -> list[str]:
    """The packages an `apt-get install` in a RUN names (flags and other commands left out)."""
    packages = []
    for command in re.split(r"&&|;", ins.args):
        words = command.split()
        if "apt-get" in words and "install" in words:
            packages += [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    return packages


# --- .dockerignore --------------------------------------------------------


def _element(element: str) -> str:
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in element)


def _pattern_regex(pattern: str) -> re.Pattern:
    elements = pattern.split("/")
    parts = []
    for i, element in enumerate(elements):
        last = i == len(elements) - 1
        if element == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_element(element) + ("" if last else "/"))
    return re.compile("".join(parts) + "$")


class DockerIgnore:
    def __init__(self, text: str):
        self.rules: list[tuple[bool, re.Pattern]] = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            include = line.startswith("!")
            pattern = line[1:] if include else line
            pattern = re.sub(r"/+", "/", pattern.strip("/")).removeprefix("./")
            self.rules.append((include, _pattern_regex(pattern)))

    def excludes(self, path: str) -> bool:
        """Whether the context path (relative to the root, `/`-separated) is left out."""
        elements = path.strip("/").split("/")
        prefixes = ["/".join(elements[: i + 1]) for i in range(len(elements))]
        excluded = False
        for include, regex in self.rules:
            if any(regex.match(p) for p in prefixes):
                excluded = not include
        return excluded
