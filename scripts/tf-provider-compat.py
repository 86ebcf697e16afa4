#!/usr/bin/env python3
"""Usage: scripts/tf-provider-compat.py OUT_DIR   (copies infra/ to OUT_DIR/infra, 5.x-checkable)

The Terraform module needs hashicorp/aws >= 6.28; this machine holds 5.100.0 only (/opt/tf-plugins).
This copies infra/ (module, examples, their *.tftest.hcl) to OUT_DIR/infra and rewrites exactly the
6.x-only syntax listed in scripts/tf-provider-compat.txt, a reviewed list, and nothing else. Every
occurrence it rewrites is printed ("not checked on 5.x: ..."), so what uses the copy (terraform
validate/test in scripts/infra-check.sh, a terraform apply against the emulator) says what it did
not check. A rule that matches nothing, or a line it cannot rewrite on its own (an argument whose
value spans lines), is an error rather than a silent difference.

The rewrite is line-based on `terraform fmt` output: a small scanner keeps the block path (resource
type, nested and dynamic block names, object attributes) by counting braces outside strings and
comments, so a rule applies only inside the blocks it names.
"""

import fnmatch
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "scripts" / "tf-provider-compat.txt"


@dataclass
class Rule:
    kind: str  # strip | rename | constraint
    scope: list[str]  # block path segments, fnmatch patterns
    name: str
    replacement: str
    why: str
    hits: list[str] = field(default_factory=list)


def load_rules() -> list[Rule]:
    rules = []
    for line in RULES.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        spec, _, why = line.partition("|")
        kind, scope, name, replacement = spec.split(None, 3)
        if kind not in ("strip", "rename", "constraint"):
            sys.exit(f"tf-provider-compat: unknown rule kind {kind!r} in {RULES}")
        rules.append(Rule(kind, scope.split("/"), name, replacement.strip(), why.strip()))
    return rules


def code_part(line: str) -> tuple[str, dict[str, int]]:
    """The line without its comment, and the net count of each bracket outside strings."""
    bare, in_string, i = [], False, 0
    while i < len(line):
        c = line[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
            elif c == "$" and line[i + 1 : i + 2] == "{":
                # An interpolation: its braces balance within the string; skip it whole.
                depth, i = 1, i + 2
                while i < len(line) and depth:
                    depth += {"{": 1, "}": -1}.get(line[i], 0)
                    i += 1
                continue
            i += 1
            continue
        if c == '"':
            in_string = True
        elif c == "#" or line[i : i + 2] == "//":
            break
        bare.append(c)
        i += 1
    code = "".join(bare)
    net = {"{": code.count("{") - code.count("}"), "[": code.count("[") - code.count("]"), "(": code.count("(") - code.count(")")}
    return line[:i], net


BLOCK = re.compile(r'^\s*([A-Za-z_][\w-]*)((?:\s+"[^"]*")*)\s*\{\s*$')
OBJECT_ATTR = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*=.*\{\s*$")
ARGUMENT = re.compile(r"^(\s*)([A-Za-z_][\w-]*)(\s*=\s*)(.*)$")


def segment(code: str) -> str:
    """The path segment a line that opens one brace adds."""
    m = BLOCK.match(code)
    if m:
        kind, labels = m.group(1), re.findall(r'"([^"]*)"', m.group(2))
        if kind in ("resource", "data", "mock_data", "mock_resource") and labels:
            return f"{kind}.{labels[0]}"
        if kind == "dynamic" and labels:
            return labels[0]
        return kind
    m = OBJECT_ATTR.match(code)
    return m.group(1) if m else "?"


def in_scope(path: list[str], scope: list[str]) -> bool:
    return len(path) == len(scope) and all(fnmatch.fnmatchcase(p, s) for p, s in zip(path, scope))


def rewrite(text: str, rel: str, rules: list[Rule]) -> str:
    lines, path = [], []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        code, net = code_part(line)
        # A dynamic block's content{} adds nothing: its arguments are the dynamic block's.
        logical = [p for p in path if p != "content"]
        keep = line
        arg = ARGUMENT.match(line.rstrip("\n"))
        for rule in rules:
            where = f"{rel}:{number}"
            if rule.kind == "rename" and rule.scope[0].startswith("data."):
                pattern = re.compile(rf"\b{re.escape(rule.scope[0])}\.([\w-]+)\.{re.escape(rule.name)}\b")
                if pattern.search(keep):
                    keep = pattern.sub(lambda m, r=rule: f"{r.scope[0]}.{m.group(1)}.{r.replacement}", keep)
                    rule.hits.append(where)
                continue
            if not arg or arg.group(2) != rule.name or not in_scope(logical, rule.scope):
                continue
            if any(net.values()):
                sys.exit(f"tf-provider-compat: {where}: {rule.name} spans lines; rewrite it by hand or in {RULES.name}")
            if rule.kind == "strip":
                keep = ""
            elif rule.kind == "rename":
                keep = f"{arg.group(1)}{rule.replacement}{arg.group(3)}{arg.group(4)}\n"
            else:  # constraint
                keep = f'{arg.group(1)}{arg.group(2)}{arg.group(3)}"{rule.replacement}"\n'
            rule.hits.append(where)
        lines.append(keep)
        opens = net["{"]
        if opens > 0:
            path.append(segment(code))
            path.extend("?" for _ in range(opens - 1))
        for _ in range(-opens):
            if path:
                path.pop()
    return "".join(lines)


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__.splitlines()[0])
    out = Path(sys.argv[1]).resolve() / "infra"
    rules = load_rules()
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(ROOT / "infra", out, ignore=shutil.ignore_patterns(".terraform", ".terraform.lock.hcl", "terraform.tfstate*"))
    for file in sorted([*out.rglob("*.tf"), *out.rglob("*.tftest.hcl"), *out.rglob("*.tfmock.hcl")]):
        rel = str(file.relative_to(out.parent))
        file.write_text(rewrite(file.read_text(), rel, rules))
    stale = [rule for rule in rules if not rule.hits]
    for rule in rules:
        print(f"tf-provider-compat: {rule.kind} {'/'.join(rule.scope)} {rule.name}: {len(rule.hits)} rewritten. Not checked on 5.x: {rule.why}")
        for hit in rule.hits:
            print(f"  {hit}")
    if stale:
        sys.exit("tf-provider-compat: rules matching nothing (remove them from the list): " + ", ".join(f"{r.kind} {'/'.join(r.scope)} {r.name}" for r in stale))


if __name__ == "__main__":
    main()
