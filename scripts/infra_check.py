#!/usr/bin/env python3
"""Offline checks of the Terraform module (infra/modules/schema-registry) and its example: what a
`terraform apply` would otherwise find out late, without providers (they cannot be downloaded here).

The .tf files are parsed with python-hcl2; expressions (conditions, counts, templates) are evaluated by
the small interpreter below, which knows the subset of HCL the module uses and fails loudly on anything
else, so a check never passes by not understanding a construct.

Run by scripts/infra-check.sh (make test). Prints one line per check and `N passed, M failed`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from pathlib import Path

import hcl2

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "infra" / "modules" / "schema-registry"
EXAMPLE = ROOT / "infra" / "examples" / "two-teams"
RUST_DIRS = [ROOT / "functions", ROOT / "shared"]

# AWS limits of the names and name prefixes the module sets. A *_prefix is the name's limit less the
# 26 characters Terraform appends (a timestamp and a counter). Every name-like attribute of every
# resource the module declares must be listed here, so a new resource cannot slip past the check.
NAME_LIMITS = {
    ("aws_s3_bucket", "bucket_prefix"): 63 - 26,
    ("aws_iam_role", "name_prefix"): 64 - 26,
    ("aws_iam_role_policy", "name"): 128,
    ("aws_lambda_function", "function_name"): 64,
    ("aws_lambda_permission", "statement_id"): 100,
    ("aws_lambda_alias", "name"): 128,
    ("aws_dynamodb_table", "name"): 255,
    ("aws_kms_alias", "name"): 256,
    ("aws_cloudwatch_log_group", "name"): 512,
    ("aws_cloudwatch_metric_alarm", "alarm_name"): 255,
    ("aws_secretsmanager_secret", "name_prefix"): 512 - 26,
    ("aws_cloudfront_cache_policy", "name"): 128,
    ("aws_cloudfront_origin_access_control", "name"): 64,
    ("aws_sns_topic", "name"): 256,
    ("aws_sqs_queue", "name"): 80,
    ("aws_cloudwatch_event_rule", "name"): 64,
}
# (An attribute whose value is another resource's attribute, e.g. bucket = aws_s3_bucket.bodies.id,
# names that resource and is sized where it is declared.)
NAME_ATTRIBUTES = {"name", "name_prefix", "bucket", "bucket_prefix", "function_name", "alarm_name", "statement_id"}

# Provider features and the first AWS provider version that has them.
PROVIDER_FEATURES = [
    ("resource", "aws_lambda_permission", "invoked_via_function_url", (6, 28, 0)),
    ("resource", "aws_cloudfront_origin_access_control", "origin_access_control_origin_type", (5, 44, 0)),
    ("data", "aws_region", ".region", (6, 0, 0)),
]
# Arguments (found in the module's text) and the first AWS provider version that has them.
PROVIDER_ARGUMENTS = [
    (r"(?m)^\s*region\s*=", (6, 0, 0), "the per-resource region argument (enhanced region support)"),
    (r'dynamic "replica" \{[^}]*content \{[^}]*consistency_mode', (6, 3, 0), "aws_dynamodb_table replica.consistency_mode"),
    (r'dynamic "replica" \{[^}]*content \{[^}]*deletion_protection_enabled', (6, 9, 0), "aws_dynamodb_table replica.deletion_protection_enabled"),
]
# Variable validations that refer to other variables need Terraform 1.9.
CROSS_VARIABLE_VALIDATION = (1, 9, 0)

# Test helpers and test code: the variables they read are not the function's.
RUST_TEST_FILES = re.compile(r"/(tests|benches|examples)/|/testing\.rs$|/testkit[/.]")


# ---------------------------------------------------------------------------------------------
# A small HCL expression interpreter: literals, references, templates, operators, conditionals,
# lists, objects, for expressions over maps, and the functions the module uses.


class Unknown(Exception):
    """An expression this interpreter does not handle (the check then fails, naming it)."""


TOKEN = re.compile(
    r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?)
  | (?P<string>"(?:[^"\\$]|\\.|\$(?!\{)|\$\{(?:[^{}"]|"(?:[^"\\]|\\.)*"|\{[^{}]*\})*\})*")
  | (?P<op>==|!=|<=|>=|&&|\|\||=>|\.\.\.|[-+*/%<>!?:()\[\]{},.=])
  | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
    )""",
    re.X,
)


def tokenize(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise Unknown(f"cannot read expression at {text[pos:pos + 40]!r}")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


class Scope:
    """Values of var.*, local.* (evaluated on demand) and resource counts."""

    def __init__(self, variables: dict, locals_: dict, resources: dict):
        self.variables = variables
        self.locals = locals_
        self.resources = resources
        self.local_values: dict = {}
        self.bindings: dict = {}

    def bind(self, **names) -> "Scope":
        """This scope with more names bound (`each` in a resource with for_each)."""
        bound = Scope(self.variables, self.locals, self.resources)
        bound.local_values = self.local_values
        bound.bindings = {**self.bindings, **names}
        return bound

    def local(self, name: str):
        if name not in self.local_values:
            if name not in self.locals:
                raise Unknown(f"local.{name} is not declared")
            self.local_values[name] = evaluate(self.locals[name], self)
        return self.local_values[name]


class Reference:
    """A resource or data attribute: known to exist, value not known before apply."""

    def __init__(self, path: str):
        self.path = path

    def __repr__(self):
        return f"<{self.path}>"


class Parser:
    def __init__(self, tokens, scope: Scope):
        self.tokens, self.pos, self.scope = tokens, 0, scope

    def peek(self, offset=0):
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else (None, None)

    def take(self, value=None):
        token = self.peek()
        if value is not None and token[1] != value:
            raise Unknown(f"expected {value!r}, found {token[1]!r}")
        self.pos += 1
        return token

    def expression(self):
        condition = self.binary(0)
        if self.peek()[1] == "?":
            self.take("?")
            # Both branches are parsed; only the chosen one is evaluated (like Terraform).
            start = self.pos
            self.skip_branch(":")
            then_tokens = self.tokens[start:self.pos]
            self.take(":")
            start = self.pos
            self.skip_branch(None)
            else_tokens = self.tokens[start:self.pos]
            chosen = then_tokens if truthy(condition) else else_tokens
            return Parser(chosen, self.scope).whole()
        return condition

    def skip_branch(self, stop):
        depth, nested_questions = 0, 0
        while self.pos < len(self.tokens):
            value = self.peek()[1]
            if depth == 0 and value == stop and nested_questions == 0:
                return
            if depth == 0 and value in (",", ")", "]", "}") and stop is None:
                return
            if depth == 0 and value == "?":
                nested_questions += 1
            elif depth == 0 and value == ":" and nested_questions:
                nested_questions -= 1
            if value in ("(", "[", "{"):
                depth += 1
            elif value in (")", "]", "}"):
                if depth == 0:
                    return
                depth -= 1
            self.pos += 1

    def whole(self):
        value = self.expression()
        if self.pos != len(self.tokens):
            raise Unknown(f"unexpected {self.peek()[1]!r}")
        return value

    PRECEDENCE = [("||",), ("&&",), ("==", "!="), ("<", ">", "<=", ">="), ("+", "-"), ("*", "/", "%")]

    def binary(self, level):
        if level == len(self.PRECEDENCE):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in self.PRECEDENCE[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = apply_operator(op, left, right)
        return left

    def unary(self):
        if self.peek()[1] == "!":
            self.take()
            return not truthy(self.unary())
        if self.peek()[1] == "-":
            self.take()
            return -self.unary()
        return self.postfix(self.primary())

    def postfix(self, value):
        while True:
            if self.peek()[1] == "." and self.peek(1)[0] == "name":
                self.take()
                attribute = self.take()[1]
                value = value.get(attribute) if isinstance(value, dict) else Reference(f"{value}.{attribute}")
            elif self.peek()[1] == "[":
                self.take()
                if self.peek()[1] == "*":
                    self.take()
                    self.take("]")
                    value = Reference(f"{value}[*]")
                    continue
                index = self.expression()
                self.take("]")
                value = value[index] if isinstance(value, (list, dict)) else Reference(f"{value}[{index}]")
            else:
                return value

    def primary(self):
        kind, value = self.take()
        if kind == "number":
            return float(value) if "." in value else int(value)
        if kind == "string":
            return template(value[1:-1], self.scope)
        if value == "(":
            inner = self.expression()
            self.take(")")
            return inner
        if value == "[":
            return self.list_or_for()
        if value == "{":
            return self.object_or_for()
        if kind != "name":
            raise Unknown(f"unexpected {value!r}")
        if value in ("true", "false"):
            return value == "true"
        if value == "null":
            return None
        if self.peek()[1] == "(":
            return self.call(value)
        if value in self.scope.bindings:
            return self.scope.bindings[value]
        if value in ("var", "local"):
            self.take(".")
            name = self.take()[1]
            if value == "var":
                if name not in self.scope.variables:
                    raise Unknown(f"var.{name} is not declared")
                return self.scope.variables[name]
            return self.scope.local(name)
        # A resource or data source attribute: exists when its count is not 0.
        path = value
        while self.peek()[1] == "." and self.peek(1)[0] == "name":
            self.take()
            path += "." + self.take()[1]
            if path.count(".") >= (2 if path.startswith("data.") else 1):
                break
        return Reference(path)

    def list_or_for(self):
        if self.peek()[1] == "for":
            return self.for_list()
        return self.expressions_until("]")

    def for_header(self, closer):
        """`for name[, name] in collection :` and the body's tokens up to `closer` (taken): the first
        name, the second (None without one), the collection and the body."""
        self.take("for")
        first_name = self.take()[1]
        second_name = None
        if self.peek()[1] == ",":
            self.take(",")
            second_name = self.take()[1]
        self.take("in")
        collection = self.expression()
        self.take(":")
        return first_name, second_name, collection, self.balanced_until(closer)

    def for_list(self):
        """[for v in collection : expr] and [for v in collection : expr if cond] over a list."""
        value_name, second_name, collection, body = self.for_header("]")
        if second_name is not None:
            raise Unknown(f"[for {value_name}, {second_name} in ...]: only [for v in ...] is read here")
        if isinstance(collection, Reference):
            return Reference(f"[for {value_name} in {collection}]")
        if_at = top_level(body, ("name", "if"))
        result = []
        for value in collection.values() if isinstance(collection, dict) else collection:
            scope = self.scope.bind(**{value_name: value})
            if if_at == len(body) or truthy(Parser(body[if_at + 1:], scope).whole()):
                result.append(Parser(body[:if_at], scope).whole())
        return result

    def expressions_until(self, closer):
        """Comma-separated expressions up to `closer` (a trailing comma allowed), taking the closer."""
        items = []
        while self.peek()[1] != closer:
            items.append(self.expression())
            if self.peek()[1] == ",":
                self.take()
        self.take(closer)
        return items

    def object_or_for(self):
        if self.peek()[1] == "for":
            return self.for_object()
        result = {}
        while self.peek()[1] != "}":
            if self.peek()[1] == "(":  # (expression) = value: the key is the expression's value
                self.take("(")
                key = self.expression()
                self.take(")")
            else:
                key_kind, key = self.take()
                key = template(key[1:-1], self.scope) if key_kind == "string" else key
            if self.peek()[1] not in ("=", ":"):
                raise Unknown(f"object key {key!r} without '='")
            self.take()
            result[key] = self.expression()
            if self.peek()[1] == ",":
                self.take()
        self.take("}")
        return result

    def balanced_until(self, closer):
        """The tokens up to the `closer` that ends the current bracket (nested brackets skipped whole), taking the closer."""
        start = self.pos
        depth = 0
        while not (depth == 0 and self.peek()[1] == closer):
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(self.peek()[1], 0)
            self.pos += 1
        inner = self.tokens[start:self.pos]
        self.take(closer)
        return inner

    def for_object(self):
        """{for k, v in map : key => value [if cond]}, and {for v in list : key => value [if cond]}."""
        key_name, value_name, collection, body = self.for_header("}")
        arrow = top_level(body, ("op", "=>"))
        if_at = top_level(body, ("name", "if"))
        result = {}
        if isinstance(collection, Reference):
            raise Unknown(f"for expression over {collection!r}, known only after apply")
        if value_name is None:
            items = [(item, item) for item in collection]
        else:
            items = collection.items() if isinstance(collection, dict) else enumerate(collection)
        for key, value in items:
            scope = self.scope.bind(**({key_name: key} if value_name is None else {key_name: key, value_name: value}))
            if if_at == len(body) or truthy(Parser(body[if_at + 1:], scope).whole()):
                result[Parser(body[:arrow], scope).whole()] = Parser(body[arrow + 1:if_at], scope).whole()
        return result

    def call(self, name):
        self.take("(")
        if name == "can":
            inner = self.balanced_until(")")
            try:
                Parser(inner, self.scope).whole()
                return True
            except CannotEvaluate:
                return False
        return call_function(name, self.expressions_until(")"))


def top_level(tokens, wanted) -> int:
    """The index of the first `wanted` token outside nested brackets (len(tokens) if none)."""
    depth = 0
    for index, token in enumerate(tokens):
        if depth == 0 and token == wanted:
            return index
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(token[1], 0)
    return len(tokens)


class CannotEvaluate(Exception):
    """Terraform would raise an error here (what can() turns into false)."""


def truthy(value):
    if isinstance(value, bool):
        return value
    raise Unknown(f"{value!r} is not a bool")


def apply_operator(op, left, right):
    if isinstance(left, Reference) or isinstance(right, Reference):
        # A resource attribute is never null, though its value is known only after apply.
        if op in ("==", "!=") and (left is None or right is None):
            return op == "!="
        if op in ("==", "!="):
            raise Unknown(f"comparison with a value known only after apply: {left!r} {op} {right!r}")
        raise Unknown(f"arithmetic on {left!r}, {right!r}")
    operations = {
        "||": lambda: truthy(left) or truthy(right),
        "&&": lambda: truthy(left) and truthy(right),
        "==": lambda: left == right,
        "!=": lambda: left != right,
        "<": lambda: left < right,
        ">": lambda: left > right,
        "<=": lambda: left <= right,
        ">=": lambda: left >= right,
        "+": lambda: left + right,
        "-": lambda: left - right,
        "*": lambda: left * right,
        "/": lambda: left / right,
        "%": lambda: left % right,
    }
    return operations[op]()


def call_function(name, arguments):
    if name == "regex":
        pattern, text = arguments
        match = re.search(pattern, text)
        if not match:
            raise CannotEvaluate(f"{text!r} does not match {pattern!r}")
        return match.group(0)
    if name == "alltrue":
        return all(truthy(item) for item in arguments[0])
    if name == "floor":
        return math.floor(arguments[0])
    if name == "nonsensitive":
        # Only Terraform tracks sensitivity; the value is the argument's.
        return arguments[0]
    if name == "contains":
        return arguments[1] in arguments[0]
    if name == "join":
        separator, items = arguments
        if isinstance(items, Reference):
            return Reference("join(...)")
        if any(isinstance(item, Reference) for item in items):
            return Reference(separator.join(str(item) for item in items))
        return separator.join(items)
    if name == "distinct":
        if isinstance(arguments[0], Reference):
            return arguments[0]
        return list(dict.fromkeys(arguments[0]))
    if name == "flatten":
        if isinstance(arguments[0], Reference):
            return arguments[0]
        flat = []
        for item in arguments[0]:
            flat.extend(call_function("flatten", [item]) if isinstance(item, list) else [item])
        return flat
    if name == "concat" and not any(isinstance(argument, Reference) for argument in arguments):
        return [item for argument in arguments for item in argument]
    if name == "values" and isinstance(arguments[0], dict):
        return list(arguments[0].values())
    if name == "keys" and isinstance(arguments[0], dict):
        return list(arguments[0])
    if name == "lookup":
        collection, key, default = arguments
        return collection.get(key, default) if isinstance(collection, dict) else Reference("lookup(...)")
    if name == "index":
        collection, value = arguments
        return collection.index(value)
    if name == "replace":
        text, old, new = arguments
        if any(isinstance(argument, Reference) for argument in arguments):
            return Reference(f"replace({text}, {old}, {new})")
        return text.replace(old, new)
    if name == "toset" and isinstance(arguments[0], list):
        # A set of strings, as for_each sees it: each element its own key.
        return {item: item for item in arguments[0]}
    if name == "length":
        return len(arguments[0])
    if name == "tostring":
        value = arguments[0]
        return value if isinstance(value, (str, Reference)) else json.dumps(value)
    if name == "jsondecode":
        try:
            return json.loads(arguments[0])
        except (TypeError, ValueError) as error:
            raise CannotEvaluate(str(error)) from error
    if name == "merge":
        result = {}
        for argument in arguments:
            result.update(argument)
        return result
    if name == "sha256":
        value = arguments[0]
        return Reference("sha256(...)") if isinstance(value, Reference) else hashlib.sha256(value.encode()).hexdigest()
    if name == "substr":
        text, offset, length = arguments
        return Reference("substr(...)") if isinstance(text, Reference) else text[offset:offset + length]
    if name in ("concat", "trimsuffix", "trimprefix", "one", "file", "filebase64sha256", "toset", "values", "keys"):
        return Reference(f"{name}(...)")
    raise Unknown(f"function {name}()")


def template(text: str, scope: Scope):
    """A quoted string: escapes and ${...} interpolations. An interpolation known only after apply
    makes the whole string a Reference."""
    parts, pos = [], 0
    while pos < len(text):
        start = text.find("${", pos)
        if start < 0:
            parts.append(text[pos:])
            break
        parts.append(text[pos:start])
        depth, end = 0, start + 2
        in_string = False
        while end < len(text):
            char = text[end]
            if in_string:
                if char == "\\":
                    end += 1
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                if depth == 0:
                    break
                depth -= 1
            end += 1
        parts.append(Parser(tokenize(text[start + 2:end]), scope).whole())
        pos = end + 1
    if any(isinstance(part, Reference) for part in parts):
        return Reference("".join(str(part) for part in parts))
    text_parts = []
    for part in parts:
        if isinstance(part, str):
            text_parts.append(part.encode("utf-8").decode("unicode_escape") if "\\" in part else part)
        elif isinstance(part, bool):
            text_parts.append("true" if part else "false")
        else:
            text_parts.append(str(part))
    return "".join(text_parts)


def evaluate(raw, scope: Scope):
    """A value as python-hcl2 gives it: `${expr}`, a quoted literal, or a dict/list of those."""
    if isinstance(raw, dict):
        # A quoted key ("5xx" = ...) names the same attribute as a bare one; a key in parentheses
        # ((var.region) = ...) is an expression.
        return {
            (evaluate(key, scope) if key.startswith("${") else unquote(key)): evaluate(value, scope)
            for key, value in raw.items() if not key.startswith("__")
        }
    if isinstance(raw, list):
        return [evaluate(value, scope) for value in raw]
    if isinstance(raw, (bool, int, float)) or raw is None:
        return raw
    if raw.startswith("${") and raw.endswith("}"):
        return Parser(tokenize(raw[2:-1]), scope).whole()
    if raw.startswith('"') and raw.endswith('"'):
        return template(raw[1:-1], scope)
    return Parser(tokenize(raw), scope).whole()


# ---------------------------------------------------------------------------------------------
# The configuration.


def unquote(name: str) -> str:
    return name[1:-1] if name.startswith('"') and name.endswith('"') else name


class Configuration:
    """One directory of .tf files: variables, locals, resources, data sources, terraform blocks."""

    def __init__(self, directory: Path):
        self.variables, self.locals, self.resources, self.data, self.terraform = {}, {}, {}, {}, []
        self.modules, self.moved = {}, []
        for path in sorted(directory.glob("*.tf")):
            with path.open() as handle:
                document = hcl2.load(handle)
            for block in document.get("variable", []):
                for name, body in block.items():
                    self.variables[unquote(name)] = body
            for block in document.get("locals", []):
                self.locals.update({key: value for key, value in block.items() if not key.startswith("__")})
            for kind, target in (("resource", self.resources), ("data", self.data)):
                for block in document.get(kind, []):
                    for type_name, named in block.items():
                        for name, body in named.items():
                            target[(unquote(type_name), unquote(name))] = body
            self.terraform.extend(document.get("terraform", []))
            self.moved.extend(document.get("moved", []))
            for block in document.get("module", []):
                for name, body in block.items():
                    self.modules[unquote(name)] = body
        self.text = "\n".join(path.read_text() for path in sorted(directory.glob("*.tf")))

    def defaults(self) -> dict:
        values = {}
        for name, body in self.variables.items():
            default = body.get("default", "__required__")
            values[name] = evaluate(default, Scope({}, {}, {})) if default != "__required__" else None
        return values

    def scope(self, overrides: dict) -> Scope:
        values = self.defaults()
        unknown = set(overrides) - set(values)
        if unknown:
            raise Unknown(f"no such variables: {sorted(unknown)}")
        values.update(overrides)
        return Scope(values, self.locals, self.resources)

    def count(self, key, scope: Scope) -> int:
        body = self.resources[key]
        return evaluate(body["count"], scope) if "count" in body else 1

    def instances(self, key, scope: Scope) -> list[Scope]:
        """A scope per instance of a resource: none when its count is 0, one per for_each entry
        (with `each` bound), else one."""
        body = self.resources[key]
        if "for_each" in body:
            entries = evaluate(body["for_each"], scope)
            if not isinstance(entries, dict):
                raise Unknown(f"{key[0]}.{key[1]}: for_each is {entries!r}, not a map")
            return [scope.bind(each={"key": name, "value": value}) for name, value in entries.items()]
        return [scope] * self.count(key, scope)

    def failed_validations(self, overrides: dict) -> list[str]:
        scope = self.scope(overrides)
        failed = []
        for name, body in self.variables.items():
            for validation in body.get("validation", []):
                try:
                    ok = truthy(evaluate(validation["condition"], scope))
                except CannotEvaluate:
                    ok = False
                if not ok:
                    failed.append(name)
        return failed

    def version_floor(self, constraint: str) -> tuple:
        match = re.fullmatch(r'"?>=\s*(\d+)\.(\d+)\.(\d+)"?', constraint.strip())
        if not match:
            raise Unknown(f"version constraint {constraint!r} is not '>= X.Y.Z'")
        return tuple(int(part) for part in match.groups())

    def required_version(self) -> tuple:
        return self.version_floor(next(block["required_version"] for block in self.terraform if "required_version" in block))

    def aws_provider_floor(self) -> tuple:
        for block in self.terraform:
            for providers in block.get("required_providers", []):
                if "aws" in providers:
                    return self.version_floor(providers["aws"]["version"])
        raise Unknown("no required_providers.aws")


# ---------------------------------------------------------------------------------------------
# The checks. Each returns a list of problems (empty: passed).

MODULE_CONFIG = Configuration(MODULE)
EXAMPLE_CONFIG = Configuration(EXAMPLE)
REQUIRED = {"name": "payments", "lambda_zip_path": "bootstrap.zip"}


def permissions_in(scope: Scope) -> list[dict]:
    """The aws_lambda_permission statements of the API function (its Function URL's callers) that
    exist in this scope, evaluated."""
    statements = []
    for key, body in MODULE_CONFIG.resources.items():
        if key[0] != "aws_lambda_permission" or "aws_lambda_function.registry." not in body["function_name"]:
            continue
        for instance in MODULE_CONFIG.instances(key, scope):
            statement = {attribute: evaluate(body[attribute], instance) for attribute in body if not attribute.startswith("__") and attribute not in ("count", "for_each")}
            statements.append(statement)
    return statements


def url_auth_type(scope: Scope) -> str:
    return evaluate(MODULE_CONFIG.resources[("aws_lambda_function_url", "registry")]["authorization_type"], scope)


ACCESS_SCENARIOS = {
    "public URL, registry auth": {},
    "public URL, bearer tokens only": {"auth_enabled": False, "jwt_issuer": "https://idp", "jwt_audience": "sr", "jwks_json": '{"keys": []}'},
    "IAM-signed callers": {"url_auth_type": "AWS_IAM"},
    "open registry": {"auth_enabled": False, "allow_anonymous": True},
    "CloudFront with an origin header, registry auth": {
        "custom_domain": "schemas.example.com",
        "certificate_arn": "arn:aws:acm:us-east-1:123456789012:certificate/abc",
        "cloudfront_origin_secret": "0123456789abcdef0123456789abcdef",
    },
    "CloudFront with origin access control": {
        "custom_domain": "schemas.example.com",
        "certificate_arn": "arn:aws:acm:us-east-1:123456789012:certificate/abc",
        "url_auth_type": "AWS_IAM",
        "cloudfront_origin_access_control": True,
        "web_acl_arn": "arn:aws:wafv2:us-east-1:123456789012:global/webacl/registry/abc",
        "auth_enabled": False,
        "allow_anonymous": True,
    },
}


def check_invoke_permissions():
    problems = []
    for scenario, overrides in ACCESS_SCENARIOS.items():
        overrides = {**REQUIRED, **overrides}
        if MODULE_CONFIG.failed_validations(overrides):
            problems.append(f"{scenario}: the scenario itself fails validation {MODULE_CONFIG.failed_validations(overrides)}")
            continue
        scope = MODULE_CONFIG.scope(overrides)
        auth_type = url_auth_type(scope)
        statements = permissions_in(scope)

        def has(principal, action, **conditions):
            return any(
                s.get("principal") == principal
                and s.get("action") == action
                and all(s.get(k) == v for k, v in conditions.items())
                for s in statements
            )

        public = has("*", "lambda:InvokeFunctionUrl", function_url_auth_type="NONE") and has(
            "*", "lambda:InvokeFunction", invoked_via_function_url=True
        )
        if auth_type == "NONE" and not public:
            problems.append(f"{scenario}: URL auth NONE without both public statements (InvokeFunctionUrl for NONE, InvokeFunction via the URL)")
        if auth_type != "NONE" and any(s.get("principal") == "*" for s in statements):
            problems.append(f"{scenario}: URL auth {auth_type} but a statement grants principal '*'")
        origin_access = overrides.get("cloudfront_origin_access_control", False)
        via_cloudfront = has("cloudfront.amazonaws.com", "lambda:InvokeFunctionUrl", function_url_auth_type="AWS_IAM") and has(
            "cloudfront.amazonaws.com", "lambda:InvokeFunction", invoked_via_function_url=True
        )
        if origin_access and not via_cloudfront:
            problems.append(f"{scenario}: origin access control without both CloudFront statements")
        for statement in statements:
            if statement.get("principal") == "cloudfront.amazonaws.com" and not isinstance(statement.get("source_arn"), Reference):
                problems.append(f"{scenario}: a CloudFront statement without the distribution as source_arn")
    return problems


def validation_problems(expectations) -> list[str]:
    """Each expectation (overrides, expected, label): with REQUIRED and `overrides` the module's
    validations refuse it by the validation of variable `expected`, or pass it when that is None."""
    problems = []
    for overrides, expected, label in expectations:
        failed = MODULE_CONFIG.failed_validations({**REQUIRED, **overrides})
        if expected is None and failed:
            problems.append(f"{label}: refused by {failed}, expected to pass")
        if expected is not None and expected not in failed:
            problems.append(f"{label}: expected {expected}'s validation to refuse it, got {failed or 'no failure'}")
    return problems


def check_access_choices():
    """Turning auth off on a reachable URL is an explicit choice; a domain needs its certificate."""
    problems = []
    expectations = [
        ({"auth_enabled": False}, "allow_anonymous", "registry auth off on a public URL without allow_anonymous"),
        ({"auth_enabled": False, "url_auth_type": "AWS_IAM"}, None, "registry auth off behind IAM-signed URL"),
        ({"custom_domain": "schemas.example.com"}, "certificate_arn", "custom_domain without certificate_arn"),
        (
            {"custom_domain": "schemas.example.com", "certificate_arn": "arn:aws:acm:eu-west-1:123456789012:certificate/abc"},
            "certificate_arn",
            "a certificate outside us-east-1",
        ),
        ({"cloudfront_origin_access_control": True}, "cloudfront_origin_access_control", "origin access control without a domain"),
        # A custom domain in front of an IAM URL that CloudFront does not sign is refused by the
        # distribution's precondition (no validation may refer to all three variables without a
        # cycle): terraform test, infra/modules/schema-registry/tests/variants.tftest.hcl.
        (
            {**{"custom_domain": "schemas.example.com", "certificate_arn": "arn:aws:acm:us-east-1:123456789012:certificate/abc"}, "url_auth_type": "AWS_IAM", "cloudfront_origin_access_control": True, "auth_enabled": False, "allow_anonymous": True},
            "web_acl_arn",
            "origin access control (the registry's auth off) without a WAF: an anonymous admin registry",
        ),
        ({"cloudfront_origin_secret": "0123456789abcdef0123456789abcdef"}, "cloudfront_origin_secret", "an origin header without a domain"),
        (
            {**ACCESS_SCENARIOS["CloudFront with an origin header, registry auth"], "cloudfront_origin_secret": "short"},
            "cloudfront_origin_secret",
            "an origin header value shorter than 32 characters",
        ),
        (
            {**ACCESS_SCENARIOS["CloudFront with origin access control"], "cloudfront_origin_secret": "0123456789abcdef0123456789abcdef"},
            "cloudfront_origin_secret",
            "an origin header with origin access control (CloudFront's signature is the gate there)",
        ),
        ({"reserved_concurrency": 0}, "reserved_concurrency", "reserved concurrency 0"),
        ({"reserved_concurrency": None}, None, "no reserved concurrency"),
        ({"name": "a" * 20}, None, "a 20-character name"),
        ({"name": "a" * 21}, "name", "a 21-character name"),
    ]
    problems += validation_problems(expectations)
    if MODULE_CONFIG.defaults().get("reserved_concurrency") is not None:
        problems.append("reserved_concurrency must default to null (reserving fails on accounts with low quotas)")
    return problems


def validation_references() -> dict[str, set[str]]:
    references = {}
    for name, body in MODULE_CONFIG.variables.items():
        for validation in body.get("validation", []):
            references.setdefault(name, set()).update(re.findall(r"\bvar\.([A-Za-z0-9_]+)", validation["condition"]))
    return references


def check_versions():
    problems = []
    references = validation_references()
    module_floor = MODULE_CONFIG.required_version()
    # `||` and `&&` evaluate both sides before Terraform 1.12: a guard such as
    # `length(var.x) == 0 || var.x[0] == ...` still indexes the empty list (plan fails). The terraform
    # tests find it where a variant evaluates it; this finds it in any expression.
    if module_floor < (1, 12, 0):
        for guarded in re.findall(r"length\(([\w.]+)\)\s*(?:==\s*0|>\s*0|!=\s*0|<=?\s*1|>=\s*1)\s*(?:\|\||&&)[^\n]*?\1\[", MODULE_CONFIG.text):
            problems.append(f"{guarded} is indexed behind a length guard joined by || or &&, which Terraform before 1.12 (required_version allows {module_floor}) does not short-circuit: use a conditional")
    # Terraform refuses to load a validation whose condition does not refer to its own variable.
    for name, body in MODULE_CONFIG.variables.items():
        for validation in body.get("validation", []):
            if not re.search(rf"\bvar\.{name}\b", validation["condition"]):
                problems.append(f"a validation of {name} does not refer to var.{name} (Terraform refuses to load it)")
    cross = sorted(name for name, refs in references.items() if refs - {name})
    if cross and module_floor < CROSS_VARIABLE_VALIDATION:
        problems.append(f"validations of {cross} refer to other variables (Terraform >= 1.9) but required_version allows {module_floor}")
    # Validations that refer to each other in a cycle fail at init.
    def cycle_from(start, node, seen):
        for next_name in references.get(node, set()) - {node}:
            if next_name == start or (next_name not in seen and cycle_from(start, next_name, seen | {next_name})):
                return True
        return False

    cycles = sorted(name for name in references if cycle_from(name, name, {name}))
    if cycles:
        problems.append(f"variable validations refer to each other in a cycle: {cycles}")
    provider_floor = MODULE_CONFIG.aws_provider_floor()
    for kind, type_name, feature, version in PROVIDER_FEATURES:
        used = False
        for (resource_type, _), body in (MODULE_CONFIG.resources if kind == "resource" else MODULE_CONFIG.data).items():
            if resource_type == type_name and not feature.startswith("."):
                used = used or feature in body
        if feature.startswith("."):
            used = re.search(rf"data\.{type_name}\.[a-z_]+\{re.escape(feature)}\b", MODULE_CONFIG.text) is not None
        if used and provider_floor < version:
            problems.append(f"{type_name} {feature} needs the AWS provider >= {'.'.join(map(str, version))}, versions.tf allows {provider_floor}")
    for pattern, version, label in PROVIDER_ARGUMENTS:
        if re.search(pattern, MODULE_CONFIG.text) and provider_floor < version:
            problems.append(f"{label} needs the AWS provider >= {'.'.join(map(str, version))}, versions.tf allows {provider_floor}")
    for label, floor, example_floor in (
        ("required_version", module_floor, EXAMPLE_CONFIG.required_version()),
        ("aws provider", provider_floor, EXAMPLE_CONFIG.aws_provider_floor()),
    ):
        if example_floor < floor:
            problems.append(f"the example's {label} floor {example_floor} is below the module's {floor}")
    return problems


def longest_name() -> str:
    condition = MODULE_CONFIG.variables["name"]["validation"][0]["condition"]
    longest = None
    for length in range(1, 200):
        overrides = {**REQUIRED, "name": "a" * length}
        if "name" not in MODULE_CONFIG.failed_validations(overrides):
            longest = "a" * length
    if longest is None:
        raise Unknown(f"no name passes {condition}")
    return longest


def check_name_lengths():
    problems = []
    name = longest_name()
    # The access scenarios between them create every instance of every resource with for_each.
    module_scopes = [MODULE_CONFIG.scope({**REQUIRED, **overrides, "name": name}) for overrides in ACCESS_SCENARIOS.values()]
    # ... and, with several regions, every further region's resources.
    module_scopes.append(MODULE_CONFIG.scope({**MULTI_REGION, "name": name}))
    for config_name, config in (("module", MODULE_CONFIG), ("example", EXAMPLE_CONFIG)):
        scopes = module_scopes if config is MODULE_CONFIG else [config.scope({})]
        for (type_name, resource_name), body in config.resources.items():
            # A resource with count is sized whatever its count, so even where the defaults create none.
            instances = [scopes[0]]
            if "for_each" in body:
                instances = list({instance.bindings["each"]["key"]: instance for scope in scopes for instance in config.instances((type_name, resource_name), scope)}.values())
            for attribute in NAME_ATTRIBUTES & set(body):
                limit = NAME_LIMITS.get((type_name, attribute))
                for instance in instances:
                    value = evaluate(body[attribute], instance)
                    if isinstance(value, Reference):
                        continue  # another resource's name, sized where that resource is declared
                    if limit is None:
                        problems.append(f"{config_name}: {type_name}.{resource_name}.{attribute}: no AWS limit listed in NAME_LIMITS")
                    elif len(value) > limit:
                        problems.append(f"{config_name}: {type_name}.{resource_name}.{attribute} is {value!r}, {len(value)} characters for a {len(name)}-character name, over AWS's {limit}")
    return problems


def rust_variables() -> dict[str, set[str]]:
    """Every environment variable the Rust sources read, with the files that read it."""
    found: dict[str, set[str]] = {}
    # Any literal that is a registry, AWS or Rust variable name; clap's `env = "NAME"`; constants
    # named for the variable they hold (`const PORT_VAR: &str = "PORT"`).
    literal = re.compile(r'"((?:REGISTRY|AWS|RUST)_[A-Z0-9_]+)"')
    clap = re.compile(r'\benv\s*=\s*"([A-Z][A-Z0-9_]*)"')
    constant = re.compile(r'\bconst\s+\w+_(?:VAR|ENV)\s*:\s*&(?:\'static\s+)?str\s*=\s*"([A-Z][A-Z0-9_]*)"')
    test_module = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*\{")
    for directory in RUST_DIRS:
        for path in directory.rglob("*.rs"):
            relative = "/" + path.relative_to(ROOT).as_posix()
            if "/target/" in relative or RUST_TEST_FILES.search(relative):
                continue
            source = path.read_text()
            tests = test_module.search(source)
            if tests:
                source = source[: tests.start()]  # test modules close the file, by the house style
            for name in set(literal.findall(source)) | set(clap.findall(source)) | set(constant.findall(source)):
                found.setdefault(name, set()).add(relative)
    return found


def readme_unset_variables() -> dict[str, str]:
    text = (MODULE / "README.md").read_text()
    section = text.split("### Function settings", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return {match.group(1): match.group(2).strip() for match in re.finditer(r"^\| `([A-Z0-9_]+)` \| (.+) \|$", section, re.M)}


def module_environment(overrides: dict) -> dict:
    scope = MODULE_CONFIG.scope({**REQUIRED, **overrides})
    body = MODULE_CONFIG.resources[("aws_lambda_function", "registry")]
    return evaluate(body["environment"][0]["variables"], scope)


def check_environment():
    problems = []
    read = rust_variables()
    if "REGISTRY_TABLE" not in read or "REGISTRY_DEFAULT_COMPATIBILITY" not in read:
        problems.append(f"the scan of the Rust sources found too little ({sorted(read)}): the patterns are out of date")
    everything = {
        "jwt_issuer": "https://idp",
        "jwt_audience": "sr",
        "jwks_json": '{"keys": []}',
        "require_owner": "owner",
        "id_cache_control": "no-cache",
        "kms_key_arns": ["arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"],
        **ACCESS_SCENARIOS["CloudFront with an origin header, registry auth"],
    }
    single_region = set(module_environment(everything))
    # The settings only a registry of several regions gets (regions.tf, lambda.tf region_environment).
    multi_region_only = set(module_environment({**everything, **MULTI_REGION_OVERRIDES})) - single_region
    set_by_module = single_region | multi_region_only
    minimal = module_environment({"auth_enabled": False, "allow_anonymous": True})
    unset = readme_unset_variables()
    for name in sorted(read):
        if name not in set_by_module and name not in unset:
            problems.append(f"{name} is read by {sorted(read[name])} but neither set by the module nor listed in README 'Function settings'")
    for name in sorted(set_by_module):
        if name not in read and name in multi_region_only:
            # The function's multi-region settings may land after the module that sets them: noted.
            print(f"     note: the multi-region form sets {name}, which no Rust source reads yet")
        elif name not in read:
            problems.append(f"the module sets {name}, which no Rust source reads")
        if name in unset:
            problems.append(f"{name} is set by the module and also listed as not set")
    # A listed name no code reads is stale documentation, not a misconfigured function: noted, not
    # failed, so a row can be written before (or outlive) the code that reads it.
    for name in sorted(unset):
        if name not in read:
            print(f"     note: README 'Function settings' lists {name}, which no Rust source reads")
    if any(value is None for value in minimal.values()):
        problems.append("the environment passes a null value")
    # Values known only after apply (ARNs, generated names) are counted as 256 bytes each.
    size = max(
        sum(len(name) + (len(value) if isinstance(value, str) else 256) for name, value in module_environment(overrides).items())
        for overrides in (everything, {**everything, **MULTI_REGION_OVERRIDES})
    )
    if size > 4096:
        problems.append(f"the environment may reach {size} bytes, over Lambda's 4 KB")
    return problems


def check_throttle_alarm():
    # alarms.tf: one alarm per entry of local.alarms; a metric math alarm has an `expression`.
    alarm = MODULE_CONFIG.scope(REQUIRED).local("alarms").get("dynamodb-throttles", {})
    expressions = [alarm["expression"]["expression"]] if "expression" in alarm else []
    problems = []
    for expression in expressions:
        ids = set(re.findall(r"\b([a-z][a-z0-9_]*)\b", expression)) - {"fill"}
        bare = [metric for metric in ids if not re.search(rf"FILL\(\s*{metric}\s*,\s*0\s*\)", expression)]
        if bare:
            problems.append(f"throttle alarm expression {expression!r} uses {bare} without FILL(m, 0): sparse metrics make the sum empty")
    if not expressions:
        problems.append("the DynamoDB throttle alarm has no expression")
    return problems


def check_example_alarm_topic():
    problems = []
    for (type_name, name), body in EXAMPLE_CONFIG.resources.items():
        if type_name != "aws_sns_topic":
            continue
        key = body.get("kms_master_key_id", "")
        if "alias/aws/" in key:
            problems.append(f"aws_sns_topic.{name} uses the AWS-managed {key}: CloudWatch alarms cannot publish to it")
        match = re.search(r"aws_kms_key\.([a-z0-9_]+)", key)
        if not match:
            problems.append(f"aws_sns_topic.{name}: kms_master_key_id {key} is not a key of the example")
            continue
        policy = EXAMPLE_CONFIG.resources[("aws_kms_key", match.group(1))]["policy"]
        document = re.search(r"data\.aws_iam_policy_document\.([a-z0-9_]+)", policy).group(1)
        statements = EXAMPLE_CONFIG.data[("aws_iam_policy_document", document)]["statement"]
        cloudwatch = [
            s for s in statements
            if any("cloudwatch.amazonaws.com" in str(p.get("identifiers")) for p in s.get("principals", []))
        ]
        actions = {action for s in cloudwatch for action in evaluate(s["actions"], EXAMPLE_CONFIG.scope({}))}
        if not {"kms:Decrypt"} <= actions or not any(action.startswith("kms:GenerateDataKey") for action in actions):
            problems.append(f"the key of aws_sns_topic.{name} does not let cloudwatch.amazonaws.com use it (kms:Decrypt, kms:GenerateDataKey*)")
    return problems


def check_edge_cache():
    """IDs are cached at the edge only when the registry's auth is off; everything else never."""
    problems = []
    domain = {"custom_domain": "schemas.example.com", "certificate_arn": "arn:aws:acm:us-east-1:123456789012:certificate/abc"}
    policy_key = ("aws_cloudfront_cache_policy", "immutable")
    for label, overrides, expect_cached in (
        ("auth on", domain, False),
        ("bearer tokens only", {**domain, **ACCESS_SCENARIOS["public URL, bearer tokens only"]}, False),
        ("open registry", {**domain, "auth_enabled": False, "allow_anonymous": True}, True),
    ):
        scope = MODULE_CONFIG.scope({**REQUIRED, **overrides})
        cached = MODULE_CONFIG.count(policy_key, scope) > 0
        if cached != expect_cached:
            problems.append(f"{label}: ID answers {'are' if cached else 'are not'} cached at the edge")
        paths = scope.local("immutable_paths")
        if sorted(paths) != ["/schemas/guids/*", "/schemas/ids/*"]:
            problems.append(f"cached paths are {paths}")
    policy = MODULE_CONFIG.resources[policy_key]
    scope = MODULE_CONFIG.scope({**REQUIRED, **domain, "auth_enabled": False, "allow_anonymous": True})
    if evaluate(policy["default_ttl"], scope) != 0 or evaluate(policy["min_ttl"], scope) != 0:
        problems.append("the ID cache policy must have min and default TTL 0 (cache only what Cache-Control allows)")
    parameters = evaluate(policy["parameters_in_cache_key_and_forwarded_to_origin"], scope)[0]
    headers = parameters["headers_config"][0]["headers"][0]["items"]
    if "Accept" not in headers or "Authorization" in headers:
        problems.append(f"the ID cache key headers are {headers}: Accept selects the media type; Authorization only with auth (never cached)")
    if parameters["query_strings_config"][0]["query_string_behavior"] != "all":
        problems.append("the ID cache key must include the query string (format, subject, fetchMaxId)")
    return problems


def check_references():
    """What `terraform validate` would report first: every var., local., resource and data reference
    names something declared, and every variable is used."""
    problems = []
    for label, config in (("module", MODULE_CONFIG), ("example", EXAMPLE_CONFIG)):
        code = re.sub(r'(?m)^\s*#.*$|\s#[^\n"]*$', "", config.text)  # comments (none inside strings here)
        code = re.sub(r"(?ms)^moved \{.*?^\}", "", code)  # earlier addresses: check_moved
        declared_resources = {f"{type_name}.{name}" for type_name, name in config.resources}
        declared_data = {f"data.{type_name}.{name}" for type_name, name in config.data}
        for name in sorted(set(re.findall(r"\bvar\.([a-z0-9_]+)", code)) - set(config.variables)):
            problems.append(f"{label}: var.{name} is not declared")
        for name in sorted(set(re.findall(r"\blocal\.([a-z0-9_]+)", code)) - set(config.locals)):
            problems.append(f"{label}: local.{name} is not declared")
        for name in sorted(set(config.variables) - set(re.findall(r"\bvar\.([a-z0-9_]+)", code))):
            problems.append(f"{label}: variable {name} is never used")
        for reference in sorted(set(re.findall(r"(?<![.\w])(aws_[a-z0-9_]+\.[a-z0-9_]+)", code)) - declared_resources):
            problems.append(f"{label}: {reference} is not declared")
        for reference in sorted(set(re.findall(r"\b(data\.aws_[a-z0-9_]+\.[a-z0-9_]+)", code)) - declared_data):
            problems.append(f"{label}: {reference} is not declared")
    return problems


def check_moved():
    """Each moved block leads from an address no longer declared to an instance the module declares
    (in one of the access scenarios), so an existing deployment keeps its objects."""
    problems = []
    address = re.compile(r'\$\{(aws_[a-z0-9_]+)\.([a-z0-9_]+)(?:\[("?)([^"\]]+)\3\])?\}')
    scopes = [MODULE_CONFIG.scope({**REQUIRED, **overrides}) for overrides in ACCESS_SCENARIOS.values()]
    for block in MODULE_CONFIG.moved:
        source, target = address.fullmatch(block["from"]), address.fullmatch(block["to"])
        if not source or not target:
            problems.append(f"moved block {block['from']} -> {block['to']}: not a resource address")
            continue
        if source.group(1, 2) in MODULE_CONFIG.resources:
            problems.append(f"moved from {block['from']}, which is still declared")
        key = target.group(1, 2)
        if key not in MODULE_CONFIG.resources:
            problems.append(f"moved to {block['to']}, which is not declared")
            continue
        if "for_each" in MODULE_CONFIG.resources[key]:
            keys = {instance.bindings["each"]["key"] for scope in scopes for instance in MODULE_CONFIG.instances(key, scope)}
            if target.group(4) not in keys:
                problems.append(f"moved to {block['to']}, but the for_each keys are {sorted(keys)}")
    return problems


def check_example_module_calls():
    """The example's module calls pass the module's validations (what `terraform plan` checks first)."""
    problems = []
    scope = EXAMPLE_CONFIG.scope({})
    for name, body in EXAMPLE_CONFIG.modules.items():
        arguments = {key: evaluate(value, scope) for key, value in body.items() if not key.startswith("__") and key != "source"}
        missing = [var for var, spec in MODULE_CONFIG.variables.items() if "default" not in spec and var not in arguments]
        if missing:
            problems.append(f"module.{name} lacks required {missing}")
        unknown = sorted(set(arguments) - set(MODULE_CONFIG.variables))
        if unknown:
            problems.append(f"module.{name} passes unknown {unknown}")
            continue
        failed = MODULE_CONFIG.failed_validations({key: value for key, value in arguments.items()})
        if failed:
            problems.append(f"module.{name} fails the validation of {failed}")
    if not EXAMPLE_CONFIG.modules:
        problems.append("the example calls no module")
    return problems


def check_example_fresh_account():
    """The example applies on a new account (concurrency quota 10: no reservation is possible) and its
    alarms reach someone (a subscription to the topic can be configured)."""
    problems = []
    scope = EXAMPLE_CONFIG.scope({})
    for name, body in EXAMPLE_CONFIG.modules.items():
        if "reserved_concurrency" in body and evaluate(body["reserved_concurrency"], scope) is not None:
            problems.append(f"module.{name} reserves concurrency: Lambda refuses any reservation on an account whose quota is 10")
    topics = {name for (type_name, name) in EXAMPLE_CONFIG.resources if type_name == "aws_sns_topic"}
    subscribed = {
        re.search(r"aws_sns_topic\.([a-z0-9_]+)", str(body.get("topic_arn", ""))).group(1)
        for (type_name, _), body in EXAMPLE_CONFIG.resources.items()
        if type_name == "aws_sns_topic_subscription" and re.search(r"aws_sns_topic\.", str(body.get("topic_arn", "")))
    }
    for topic in sorted(topics - subscribed):
        problems.append(f"aws_sns_topic.{topic} has no subscription resource: its alarms would notify no one")
    return problems


def check_cost_section():
    """The README's cost estimate is the output of scripts/infra_cost.py (its counts and prices)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import infra_cost

    text = (MODULE / "README.md").read_text()
    match = re.search(r"<!-- cost:begin[^>]*-->\n(.*?)<!-- cost:end -->", text, re.S)
    if not match:
        return ["README.md has no cost section between <!-- cost:begin --> and <!-- cost:end -->"]
    if match.group(1).strip() != infra_cost.section().strip():
        return ["README.md's cost section differs from scripts/infra_cost.py's output: regenerate it"]
    # docs/multi-region.md quotes what a further region adds: each figure it quotes must be one the
    # script computes.
    doc = (ROOT / "docs" / "multi-region.md").read_text()
    costs = doc.split("\n## Costs\n", 1)[1].split("\n## ", 1)[0] if "\n## Costs\n" in doc else ""
    figures = re.findall(r"\$[0-9][0-9,]*\.[0-9]+", costs)
    if not figures:
        return ["docs/multi-region.md has no Costs section quoting the estimate"]
    stale = [figure for figure in figures if figure not in infra_cost.section()]
    if stale:
        return [f"docs/multi-region.md quotes {stale}, which scripts/infra_cost.py does not compute: update its Costs section"]
    return []


def check_revocation():
    """Running instances read their users and keys again, and a JWKS change reaches the function."""
    problems = []
    jwt = {"jwt_issuer": "https://idp", "jwt_audience": "sr"}
    environment = module_environment({**jwt, "jwks_json": '{"keys": [1]}'})
    rotated = module_environment({**jwt, "jwks_json": '{"keys": [2]}'})
    reload = environment.get("REGISTRY_AUTH_RELOAD_SECONDS")
    if reload is None or int(reload) <= 0 or int(reload) > 300:
        problems.append(f"REGISTRY_AUTH_RELOAD_SECONDS is {reload!r} by default: warm instances must read their users and keys again within minutes")
    if environment.get("REGISTRY_AUTH_REVISION") in (None, rotated.get("REGISTRY_AUTH_REVISION")):
        problems.append("a change of jwks_json does not change the function's environment: warm instances keep the old keys until they reload")
    if isinstance(environment.get("REGISTRY_AUTH_REVISION"), Reference):
        problems.append("REGISTRY_AUTH_REVISION is known only after apply: derive it from jwks_json so the plan shows the change")
    return problems


# The encryption context of every KMS call on exporter credentials (shared/registry-store-aws/src/exporter_secrets.rs).
EXPORTER_CREDENTIAL_CONTEXT = ("purpose", "registry-exporter-credential")


def exporter_credentials_grant(statement: dict) -> bool:
    """Whether `statement` grants a key only for exporter credentials: kms:Encrypt and/or kms:Decrypt,
    conditioned on exactly their encryption context, so it opens nothing else the key protects."""
    actions = set(statement.get("actions", []))
    variable, value = EXPORTER_CREDENTIAL_CONTEXT
    conditioned = any(
        c.get("test") == "StringEquals" and c.get("variable") == f"kms:EncryptionContext:{variable}" and [str(v) for v in c.get("values", [])] == [value]
        for c in statement.get("condition", [])
    )
    return bool(actions) and actions <= {"kms:Encrypt", "kms:Decrypt"} and conditioned


def statements(document: str, overrides: dict | None = None, key: str | None = None) -> list[dict]:
    """The statements of the module's policy document `document`, evaluated (dynamic ones included),
    after those of the documents its source_policy_documents name, as Terraform merges them. Of a
    document with for_each, those of its instance `key` (the first region's when None)."""
    body = MODULE_CONFIG.data[("aws_iam_policy_document", document)]
    sources = re.findall(r"data\.aws_iam_policy_document\.([a-z0-9_]+)\.json", str(body.get("source_policy_documents", "")))
    found = [statement for source in sources for statement in statements(source, overrides)]
    scope = MODULE_CONFIG.scope({**REQUIRED, **(overrides or {})})
    if "for_each" in body:
        instances = evaluate(body["for_each"], scope)
        key = next(iter(instances)) if key is None else key
        scope = scope.bind(each={"key": key, "value": instances[key]})
    found += [evaluate(statement, scope) for statement in body.get("statement", [])]
    for dynamic in body.get("dynamic", []):
        for _, block in dynamic.items():
            items = evaluate(block["for_each"], scope)
            for item in items:
                found.append(evaluate(block["content"][0], scope.bind(statement={"value": item})))
    return found


def check_home_marker_deny():
    """Both functions' roles, the API's and the exporter's, are denied every write of the fence item
    HOME / MARKER (its ConditionCheck excepted), in every region's replica: only the failover command
    writes it. (terraform test checks the shared document; its mocked provider renders no JSON, so
    only here is each role's document followed to the statements it merges.)"""
    problems = []
    writes = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    for document in ("registry", "exporter"):
        for overrides in ({}, MULTI_REGION_OVERRIDES):
            denies = [
                s for s in statements(document, overrides)
                if s.get("effect") == "Deny" and writes <= set(s.get("actions", [])) and "dynamodb:ConditionCheckItem" not in s.get("actions", [])
                and any(c.get("test") == "ForAnyValue:StringEquals" and c.get("variable") == "dynamodb:LeadingKeys" and c.get("values") == ["HOME"] for c in s.get("condition", []))
            ]
            if len(denies) != 1:
                problems.append(f"{overrides or 'defaults'}: the {document} role has {len(denies)} denies of writes to the HOME partition, expected one")
            elif overrides and regions_named([plain(r) for r in denies[0].get("resources", [])]) != set(REGIONS):
                problems.append(f"the {document} role's HOME deny does not name every region's replica")
    return problems


def check_restore_adoption():
    """A restored table (a new name) can be adopted, and what a restore drops is set on it again."""
    problems = []
    table = MODULE_CONFIG.resources[("aws_dynamodb_table", "registry")]
    if "table_name" not in MODULE_CONFIG.variables:
        return ["no table_name input: a restored table (DynamoDB restores into a new name) cannot be adopted"]
    for overrides, expected in (({}, "schema-registry-payments"), ({"table_name": "schema-registry-payments-r1"}, "schema-registry-payments-r1")):
        name = evaluate(table["name"], MODULE_CONFIG.scope({**REQUIRED, **overrides}))
        if name != expected:
            problems.append(f"with {overrides or 'defaults'} the table is named {name!r}, expected {expected!r}")
    scope = MODULE_CONFIG.scope({**REQUIRED, "table_name": "schema-registry-payments-r1"})
    if evaluate(table.get("deletion_protection_enabled", "false"), scope) is not True:
        problems.append("the table has no deletion protection (a restore drops it; the module must set it)")
    if not any(evaluate(block.get("enabled", "false"), scope) is True for block in table.get("point_in_time_recovery", [])):
        problems.append("the table has no point-in-time recovery (a restore drops it; the module must set it)")
    if "tags" not in table:
        problems.append("the table has no tags (a restore drops them; the module must set them)")
    return problems


def check_missing_objects():
    """A missing object reads as absent: S3 answers 404 (not 403) only to a caller that may list the bucket."""
    problems = []
    listing = [s for s in statements("registry") if "s3:ListBucket" in s.get("actions", [])]
    if not listing:
        problems.append("the role has no s3:ListBucket: S3 answers a GetObject of a missing key with 403, a 500 instead of absent")
    for statement in listing:
        if statement.get("condition"):
            problems.append(f"s3:ListBucket has a condition {statement['condition']}: GetObject carries no s3:prefix, so S3 still answers 403 for missing keys")
    return problems


def check_write_once():
    """Bodies are write-once (the bucket policy refuses writes without If-None-Match) and the ID ledger's
    versions are kept (no lifecycle expiry under ids/)."""
    problems = []
    policy = MODULE_CONFIG.resources[("aws_s3_bucket_policy", "bodies")]["policy"]
    document = re.search(r"data\.aws_iam_policy_document\.([a-z0-9_]+)", policy).group(1)
    denies = [
        s for s in statements(document)
        if s.get("effect") == "Deny" and "s3:PutObject" in s.get("actions", [])
        and any("/schemas/*" in str(r) for r in s.get("resources", []))
        and any(c.get("test") == "Null" and c.get("variable") == "s3:if-none-match" and c.get("values") == ["true"] for c in s.get("condition", []))
    ]
    if not denies:
        problems.append("the bucket policy does not refuse writes to schemas/* without If-None-Match (Null s3:if-none-match): bodies could be overwritten")
    scope = MODULE_CONFIG.scope(REQUIRED)
    rules = evaluate(MODULE_CONFIG.resources[("aws_s3_bucket_lifecycle_configuration", "bodies")]["rule"], scope)
    for rule in rules:
        expires = rule.get("noncurrent_version_expiration") or rule.get("expiration")
        prefix = next((f.get("prefix") for f in rule.get("filter", []) if f.get("prefix")), "")
        if expires and not prefix.startswith("schemas/"):
            problems.append(f"lifecycle rule {rule.get('id')} expires versions under {prefix or 'the whole bucket'!r}: the ID ledger (ids/) must keep every version")
    return problems


def check_ranges():
    """Memory, timeout and cache inputs outside what Lambda and the registry accept are refused at plan."""
    expectations = [
        ({"memory_mb": 127}, "memory_mb"),
        ({"memory_mb": 10241}, "memory_mb"),
        ({"memory_mb": 128, "cache_bytes": 0}, None),
        ({"timeout_seconds": 2}, "timeout_seconds"),
        ({"timeout_seconds": 901}, "timeout_seconds"),
        ({"timeout_seconds": 900}, None),
        ({"memory_mb": 128, "cache_bytes": 128 * 1048576}, "cache_bytes"),
        ({"auth_reload_seconds": -1}, "auth_reload_seconds"),
    ]
    return validation_problems([(overrides, expected, overrides) for overrides, expected in expectations])


def check_log_and_metric_costs():
    """The platform's per-request lines are not ingested, and the EMF dimensions stay few."""
    problems = []
    logging = MODULE_CONFIG.resources[("aws_lambda_function", "registry")]["logging_config"][0]
    level = evaluate(logging.get("system_log_level", "null"), MODULE_CONFIG.scope(REQUIRED))
    if level not in ("WARN", "ERROR"):
        problems.append(f"system_log_level is {level!r}: START/END/REPORT lines cost about a third of the log bill; set WARN")
    emf = (ROOT / "functions" / "registry-lambda" / "src" / "emf.rs").read_text()
    for dimensions in re.findall(r'"Dimensions":\s*\[(\[[^\]]*\])', emf):
        if '"Status"' in dimensions:
            problems.append(f"EMF dimension set {dimensions} has Status: one metric per operation and status (dollars per registry-month)")
    return problems


def check_origin_header():
    """With cloudfront_origin_secret, CloudFront sends the header the function requires, from the same value."""
    problems = []
    overrides = {**REQUIRED, **ACCESS_SCENARIOS["CloudFront with an origin header, registry auth"]}
    scope = MODULE_CONFIG.scope(overrides)
    distribution = MODULE_CONFIG.resources[("aws_cloudfront_distribution", "registry")]
    origin = distribution["origin"][0]
    headers = []
    for block in origin.get("dynamic", []):
        for name, body in block.items():
            if unquote(name) == "custom_header":
                for value in evaluate(body["for_each"], scope):
                    headers.append(evaluate(body["content"][0], scope.bind(custom_header={"value": value})))
    sent = {header["name"]: header["value"] for header in headers}
    if sent.get("x-registry-origin") != overrides["cloudfront_origin_secret"]:
        problems.append(f"CloudFront sends {sent}, not the x-registry-origin header with cloudfront_origin_secret")
    if not isinstance(module_environment(overrides).get("REGISTRY_ORIGIN_SECRET"), Reference):
        problems.append("the function is not given REGISTRY_ORIGIN_SECRET, so it would not require the header")
    if "REGISTRY_ORIGIN_SECRET" in module_environment({**REQUIRED}):
        problems.append("REGISTRY_ORIGIN_SECRET is set without cloudfront_origin_secret")
    return problems


def check_rollback():
    """Every deployment is a published version, and with serve_alias the URL and its permissions sit on
    the alias, so pointing the alias at an earlier version rolls back."""
    problems = []
    function = MODULE_CONFIG.resources[("aws_lambda_function", "registry")]
    if evaluate(function.get("publish", "false"), MODULE_CONFIG.scope(REQUIRED)) is not True:
        problems.append("the function does not publish versions: there is nothing to roll back to")
    if ("aws_lambda_alias", "live") not in MODULE_CONFIG.resources:
        return problems + ["no alias to roll back with"]
    url = MODULE_CONFIG.resources[("aws_lambda_function_url", "registry")]
    for serve_alias in (True, False):
        scope = MODULE_CONFIG.scope({**REQUIRED, "serve_alias": serve_alias})
        qualifier = evaluate(url.get("qualifier", "null"), scope)
        if serve_alias != (qualifier is not None):
            problems.append(f"serve_alias = {serve_alias}: the Function URL's qualifier is {qualifier!r}")
        for statement in permissions_in(scope):
            if (statement.get("qualifier") is not None) != (qualifier is not None):
                problems.append(f"serve_alias = {serve_alias}: permission {statement.get('statement_id')} has qualifier {statement.get('qualifier')!r}, the URL {qualifier!r}")
    alias = MODULE_CONFIG.resources[("aws_lambda_alias", "live")]
    pinned = evaluate(alias["function_version"], MODULE_CONFIG.scope({**REQUIRED, "function_version": "41"}))
    if pinned != "41":
        problems.append(f"function_version = 41 points the alias at {pinned!r}")
    return problems


def check_alarms_and_keys():
    """The alarms that catch what Url5xxCount misses, an ID-growth alarm that a quiet period cannot
    trip, KMS use limited to the services and calls the function makes, and no KEK key by default."""
    problems = []
    alarms = MODULE_CONFIG.scope(REQUIRED).local("alarms")
    wanted = {"errors": "Errors", "4xx": "Url4xxCount", "concurrency": "ConcurrentExecutions"}
    for name, metric in wanted.items():
        if alarms.get(name, {}).get("metric", {}).get("metric_name") != metric:
            problems.append(f"no {name} alarm on AWS/Lambda {metric}")
    growth = alarms.get("id-growth", {})
    if growth.get("expression") and re.search(r"\b(DIFF|RATE)\(", growth["expression"]["expression"]):
        problems.append("the id-growth alarm takes a DIFF/RATE of a per-instance maximum: it fires after quiet periods")
    if growth.get("metric", {}).get("metric_name") != "NewSchemaIds" or growth["metric"].get("statistic") != "Sum":
        problems.append("the id-growth alarm must sum NewSchemaIds (allocations counted where they happen)")
    kek = {"kms_key_arns": ["arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"]}
    registry_statements = statements("registry", kek)
    if not any(exporter_credentials_grant(s) and "kms:Encrypt" in s.get("actions", []) for s in registry_statements):
        problems.append("the function cannot encrypt exporter credentials (kms:Encrypt under their encryption context)")
    # Only the exporter function opens them (terraform test security.tftest.hcl checks the same).
    if any(exporter_credentials_grant(s) and "kms:Decrypt" in s.get("actions", []) for s in registry_statements):
        problems.append("the API function may decrypt exporter credentials: only the exporter function opens them")
    source = (ROOT / "shared" / "registry-store-aws" / "src" / "exporter_secrets.rs").read_text()
    if 'const CONTEXT: (&str, &str) = ("{}", "{}");'.format(*EXPORTER_CREDENTIAL_CONTEXT) not in source:
        problems.append("the encryption context the IAM conditions name is not the one exporter_secrets.rs uses")
    for statement in registry_statements:
        resources = [str(r) for r in statement.get("resources", [])]
        actions = statement.get("actions", [])
        if exporter_credentials_grant(statement):
            continue
        if any("kms:" in action for action in actions) and "aws_kms_key.registry" in " ".join(resources):
            if not any(c.get("variable") == "kms:ViaService" for c in statement.get("condition", [])):
                problems.append(f"statement {statement.get('sid')} lets the role use the module's key directly (no kms:ViaService)")
        if kek["kms_key_arns"][0] in resources and "kms:GenerateDataKey" in actions:
            problems.append("KEK keys get kms:GenerateDataKey, which the registry never calls (it generates DEKs itself)")
    key = kek["kms_key_arns"][0]
    for arns, refused in (([key], False), (["arn:aws:kms:eu-west-1:123456789012:alias/pii"], True), (["1234abcd-12ab-34cd-56ef-1234567890ab"], True)):
        if ("kms_key_arns" in MODULE_CONFIG.failed_validations({**REQUIRED, "kms_key_arns": arns})) != refused:
            problems.append(f"kms_key_arns = {arns} is {'accepted' if refused else 'refused'}: only key ARNs may be listed")
    if module_environment({}).get("REGISTRY_KMS_KEY_ARNS") != "none":
        problems.append("without kms_key_arns the function must get REGISTRY_KMS_KEY_ARNS=none (unset lets it try any key)")
    return problems


# The exporter (schema linking): exporter.tf. Each check runs on the defaults (exporter on) and
# fails on a module without the exporter.
EXPORTER_OFF = {**REQUIRED, "exporter_enabled": False}


def plain(value) -> str:
    """A value as text, a reference's markers dropped: `aws_x.y.arn/stream/*`."""
    return re.sub(r"[<>]", "", str(value))


def exporter_resource(type_name: str, name: str = "exporter") -> tuple[dict, Scope] | None:
    """The body of a module resource and the default scope, when it exists with the defaults."""
    key = (type_name, name)
    scope = MODULE_CONFIG.scope(REQUIRED)
    if key not in MODULE_CONFIG.resources or not MODULE_CONFIG.instances(key, scope):
        return None
    return MODULE_CONFIG.resources[key], scope


def check_exporter_stream():
    """The table's stream (old and new images) feeds the exporter function through a mapping that
    reports partial failures, bisects on errors, bounds its retries and record age, keeps shard order,
    starts at the oldest record, and parks exhausted batches in an encrypted queue."""
    problems = []
    table = MODULE_CONFIG.resources[("aws_dynamodb_table", "registry")]
    for overrides, expected in ((REQUIRED, (True, "NEW_AND_OLD_IMAGES")), (EXPORTER_OFF, (False, None))):
        if "exporter_enabled" not in MODULE_CONFIG.variables:
            problems.append("no exporter_enabled input")
            break
        scope = MODULE_CONFIG.scope(overrides)
        found = (evaluate(table.get("stream_enabled", "false"), scope) is True, evaluate(table.get("stream_view_type", "null"), scope))
        if found != expected:
            problems.append(f"with {overrides}: the table's stream is {found}, expected {expected}")
    found = exporter_resource("aws_lambda_event_source_mapping")
    if not found:
        return problems + ["no event source mapping from the table's stream to an exporter function"]
    mapping, scope = found
    value = lambda name, default="null": evaluate(mapping.get(name, default), scope)  # noqa: E731
    if "aws_dynamodb_table.registry.stream_arn" not in plain(value("event_source_arn")):
        problems.append(f"the mapping reads {value('event_source_arn')}, not the table's stream")
    if "aws_lambda_function.exporter" not in plain(value("function_name")):
        problems.append("the mapping does not invoke the exporter function")
    if value("starting_position") != "TRIM_HORIZON":
        problems.append(f"starting_position {value('starting_position')!r}: LATEST skips what was written before the mapping")
    if "ReportBatchItemFailures" not in (value("function_response_types", "[]") or []):
        problems.append("no ReportBatchItemFailures: one failing record fails (and re-sends) its whole batch")
    if value("bisect_batch_on_function_error", "false") is not True:
        problems.append("bisect_batch_on_function_error is off: a record that crashes the handler blocks its batch")
    if value("parallelization_factor", "1") != 1:
        problems.append("parallelization_factor is not 1: an exporter's records would be handled out of order")
    retries, age = value("maximum_retry_attempts", "-1"), value("maximum_record_age_in_seconds", "-1")
    if not isinstance(retries, int) or retries < 0:
        problems.append(f"maximum_retry_attempts {retries}: unbounded, one refused change holds the shard for 24 hours")
    if not isinstance(age, int) or not 60 <= age < 86400:
        problems.append(f"maximum_record_age_in_seconds {age}: must be bounded under the stream's 24 hours")
    batch = value("batch_size", "100")
    timeout = evaluate(MODULE_CONFIG.resources[("aws_lambda_function", "exporter")]["timeout"], scope)
    if batch * 1 > timeout:  # at least a second per change (a few destination requests) must fit
        problems.append(f"batch_size {batch} does not fit the function's {timeout} s at a second per change")
    failure = [d for config in mapping.get("destination_config", []) for d in config.get("on_failure", [])]
    target = evaluate(failure[0]["destination_arn"], scope) if failure else None
    match = re.search(r"aws_sqs_queue\.([a-z0-9_]+)", str(target))
    if not match:
        problems.append(f"no on-failure destination queue (found {target})")
    elif "kms_master_key_id" not in MODULE_CONFIG.resources[("aws_sqs_queue", match.group(1))]:
        problems.append(f"the failure queue aws_sqs_queue.{match.group(1)} is not encrypted with a KMS key")
    off = MODULE_CONFIG.scope(EXPORTER_OFF)
    for (type_name, name), body in MODULE_CONFIG.resources.items():
        if "exporter" in name and MODULE_CONFIG.instances((type_name, name), off):
            problems.append(f"exporter_enabled = false still creates {type_name}.{name}")
    return problems


def check_exporter_filters():
    """The stream filters pass version rows and configs and never the exporters' own items, which the
    function writes (a filter passing them would invoke it for its own writes, again and again)."""
    problems = []
    if not exporter_resource("aws_lambda_event_source_mapping"):
        return ["no event source mapping, so no stream filters"]
    scope = MODULE_CONFIG.scope(REQUIRED)
    try:
        filters, partitions = scope.local("exporter_stream_filters"), scope.local("exporter_partitions")
    except Unknown as error:
        return [str(error)]

    def passes(pattern: dict, pk: str, sk: str) -> bool:
        keys = pattern.get("dynamodb", {}).get("Keys", {})
        for name, value in (("pk", pk), ("sk", sk)):
            rules = keys.get(name, {}).get("S")
            if rules is None:
                continue
            if not any(value == rule if isinstance(rule, str) else value.startswith(rule.get("prefix", "\0")) for rule in rules):
                return False
        return True

    wanted = {("S#orders-value", "V#0000000001"): True, ("CONFIG", "S#orders-value"): True, ("CONFIG", "GLOBAL"): True,
              ("COUNTER", "ID"): False, ("ID#0000000001", "FP"): False, ("S#orders-value", "USED"): False}
    for partition in partitions:
        wanted[(partition.replace("*", "orders"), "STATE")] = False
    for (pk, sk), expected in wanted.items():
        if any(passes(pattern, pk, sk) for pattern in filters) != expected:
            problems.append(f"the stream filters {'drop' if expected else 'pass'} {pk} / {sk}")
    if len(filters) > 5:
        problems.append(f"{len(filters)} filters: an event source mapping takes at most 5")
    return problems


def check_exporter_schedule():
    """A scheduled catch-up run invokes the exporter function, which EventBridge may invoke only from
    that rule."""
    problems = []
    found = exporter_resource("aws_cloudwatch_event_rule", "exporter_catch_up")
    if not found:
        return ["no scheduled catch-up run (a reset or a pause over the stream's 24 hours would never catch up)"]
    rule, scope = found
    schedule = evaluate(rule["schedule_expression"], scope)
    if not re.fullmatch(r"rate\((1 minute|(?!1 )[1-9][0-9]* minutes|1 hour|(?!1 )[1-9][0-9]* hours)\)", str(schedule)):
        problems.append(f"schedule {schedule!r} is not a valid rate (note: 'rate(1 minutes)' is refused)")
    for minutes in (1, 5, 1440, 1441):
        refused = "exporter_catch_up_minutes" in MODULE_CONFIG.failed_validations({**REQUIRED, "exporter_catch_up_minutes": minutes})
        if refused != (minutes in (1, 1441)):
            problems.append(f"exporter_catch_up_minutes = {minutes} is {'refused' if refused else 'accepted'}")
    targets = [body for (type_name, _), body in MODULE_CONFIG.resources.items() if type_name == "aws_cloudwatch_event_target"]
    if not any("aws_lambda_function.exporter" in str(body.get("arn")) and "exporter_catch_up" in str(body.get("rule")) for body in targets):
        problems.append("no event target sends the catch-up rule to the exporter function")
    permissions = [body for (type_name, _), body in MODULE_CONFIG.resources.items() if type_name == "aws_lambda_permission" and "aws_lambda_function.exporter" in body["function_name"]]
    if not any(evaluate(body["principal"], scope) == "events.amazonaws.com" and "exporter_catch_up" in str(body.get("source_arn")) for body in permissions):
        problems.append("EventBridge may not invoke the exporter function from the catch-up rule (permission with the rule as source_arn)")
    return problems


def check_exporter_iam():
    """The exporter's role reads the stream, the registry's items and bodies, writes only exporter
    partitions, sends to its failure queue, uses the key only via services, and nothing is '*'."""
    problems = []
    if ("aws_iam_policy_document", "exporter") not in MODULE_CONFIG.data:
        return ["no exporter policy document"]
    found = statements("exporter")
    actions = {action for statement in found for action in statement.get("actions", [])}
    for needed in ("dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:DescribeStream", "dynamodb:ListStreams", "sqs:SendMessage", "s3:GetObject", "s3:ListBucket"):
        if needed not in actions:
            problems.append(f"the exporter's role lacks {needed}")
    if not any(exporter_credentials_grant(statement) for statement in found):
        problems.append("the exporter's role cannot decrypt the destinations' credentials (kms:Decrypt under their encryption context)")
    for forbidden in ("dynamodb:Scan", "s3:PutObject", "s3:DeleteObject", "dynamodb:*", "kms:Encrypt"):
        if forbidden in actions:
            problems.append(f"the exporter's role has {forbidden}")
    writes = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    for statement in found:
        resources = [plain(resource) for resource in statement.get("resources", [])]
        if any(resource == "*" for resource in resources):
            problems.append(f"statement {statement.get('sid')} has resource '*'")
        if writes & set(statement.get("actions", [])):
            leading = [c for c in statement.get("condition", []) if c.get("variable") == "dynamodb:LeadingKeys"]
            if not leading or any("S#" in value or value == "*" for c in leading for value in c.get("values", [])):
                problems.append(f"statement {statement.get('sid')} writes items without a dynamodb:LeadingKeys condition on the exporter partitions")
        if any(action.startswith("dynamodb:GetRecords") for action in statement.get("actions", [])) and not all(r.endswith("/stream/*") for r in resources):
            problems.append(f"the stream actions are granted on {resources}, not only the table's stream")
        if exporter_credentials_grant(statement):
            if statement.get("actions") != ["kms:Decrypt"]:
                problems.append("the exporter's role may do more than decrypt credentials with the key")
            continue
        if any(action.startswith("kms:") for action in statement.get("actions", [])):
            via = [c for c in statement.get("condition", []) if c.get("variable") == "kms:ViaService"]
            services = " ".join(str(v) for c in via for v in c.get("values", []))
            if not via or "sqs." not in services:
                problems.append("the module's key is not usable through SQS (the encrypted failure queue) only via services")
    # The first region's key policy (where the exporter runs).
    logs = [c["values"] for s in statements("kms") for c in s.get("condition", []) if "aws:logs:arn" in c["variable"]]
    if not any(plain(value).endswith("/aws/lambda/schema-registry-payments-exporter") for values in logs for value in (values if isinstance(values, list) else [values])):
        problems.append("the key policy does not let CloudWatch Logs encrypt the exporter's log group")
    return problems


def check_exporter_alarms():
    """Alarms on the exporter's lag (IteratorAge), its errors and its failure queue."""
    problems = []
    alarms = MODULE_CONFIG.scope(REQUIRED).local("alarms")
    metrics = {(alarm["metric"].get("metric_name"), str(alarm["metric"].get("dimensions"))) for alarm in alarms.values() if alarm.get("metric")}
    for metric, dimension in (("IteratorAge", "aws_lambda_function.exporter"), ("Errors", "aws_lambda_function.exporter"), ("NumberOfMessagesSent", "aws_sqs_queue.exporter")):
        if not any(name == metric and dimension in dimensions for name, dimensions in metrics):
            problems.append(f"no alarm on {metric} of {dimension}")
    age = [alarm for alarm in alarms.values() if alarm.get("metric", {}).get("metric_name") == "IteratorAge"]
    if age and not age[0]["threshold"] < 86400 * 1000:
        problems.append("the IteratorAge alarm fires only after the stream has dropped records (24 hours)")
    off = MODULE_CONFIG.scope(EXPORTER_OFF).local("alarms") if "exporter_enabled" in MODULE_CONFIG.variables else {}
    if any("exporter" in name for name in off):
        problems.append("exporter_enabled = false still creates exporter alarms")
    return problems


def check_exporter_environment():
    """The exporter function starts as the stream handler and is given only variables the Rust
    sources read."""
    found = exporter_resource("aws_lambda_function")
    if not found:
        return ["no exporter function"]
    body, scope = found
    environment = evaluate(body["environment"][0]["variables"], scope)
    problems = []
    if environment.get("REGISTRY_LAMBDA_HANDLER") != "exporter":
        problems.append(f"REGISTRY_LAMBDA_HANDLER is {environment.get('REGISTRY_LAMBDA_HANDLER')!r}, not 'exporter'")
    read = rust_variables()
    for name in sorted(set(environment) - set(read)):
        problems.append(f"the exporter function is given {name}, which no Rust source reads")
    if "REGISTRY_LAMBDA_HANDLER" in module_environment({}):
        problems.append("the API function is given REGISTRY_LAMBDA_HANDLER")
    return problems


# ---------------------------------------------------------------------------------------------
# Several regions (regions.tf, docs/multi-region.md). Each check fails on the module without them.

REGIONS = ["eu-west-1", "eu-central-1", "ap-southeast-1"]
MULTI_REGION_OVERRIDES = {"regions": REGIONS, "home_region": "eu-central-1", "ack_regions": ["ap-southeast-1"]}
MULTI_REGION = {**REQUIRED, **MULTI_REGION_OVERRIDES}

# The resources of the module as it was before it served several regions, with their shape: an
# existing single-region deployment keeps every one of them under the same address (or a moved block
# leads from it), so upgrading destroys nothing.
SINGLE_REGION_RESOURCES = [
    ("aws_cloudfront_cache_policy", "immutable", "count"),
    ("aws_cloudfront_distribution", "registry", "count"),
    ("aws_cloudfront_origin_access_control", "registry", "count"),
    ("aws_cloudwatch_event_rule", "exporter_catch_up", "count"),
    ("aws_cloudwatch_event_target", "exporter_catch_up", "count"),
    ("aws_cloudwatch_log_group", "exporter", "count"),
    ("aws_cloudwatch_log_group", "registry", "single"),
    ("aws_cloudwatch_metric_alarm", "registry", "for_each"),
    ("aws_dynamodb_table", "registry", "single"),
    ("aws_iam_role", "exporter", "count"),
    ("aws_iam_role", "registry", "single"),
    ("aws_iam_role_policy", "auth", "count"),
    ("aws_iam_role_policy", "exporter", "count"),
    ("aws_iam_role_policy", "registry", "single"),
    ("aws_iam_role_policy_attachment", "exporter_xray", "count"),
    ("aws_iam_role_policy_attachment", "xray", "count"),
    ("aws_kms_alias", "registry", "single"),
    ("aws_kms_key", "registry", "single"),
    ("aws_lambda_alias", "live", "single"),
    ("aws_lambda_event_source_mapping", "exporter", "count"),
    ("aws_lambda_function", "exporter", "count"),
    ("aws_lambda_function", "registry", "single"),
    ("aws_lambda_function_event_invoke_config", "exporter", "count"),
    ("aws_lambda_function_url", "registry", "single"),
    ("aws_lambda_permission", "exporter_catch_up", "count"),
    ("aws_lambda_permission", "url", "for_each"),
    ("aws_s3_bucket", "bodies", "single"),
    ("aws_s3_bucket_lifecycle_configuration", "bodies", "single"),
    ("aws_s3_bucket_ownership_controls", "bodies", "single"),
    ("aws_s3_bucket_policy", "bodies", "single"),
    ("aws_s3_bucket_public_access_block", "bodies", "single"),
    ("aws_s3_bucket_server_side_encryption_configuration", "bodies", "single"),
    ("aws_s3_bucket_versioning", "bodies", "single"),
    ("aws_secretsmanager_secret", "auth", "for_each"),
    ("aws_secretsmanager_secret_version", "jwks", "count"),
    ("aws_secretsmanager_secret_version", "origin", "count"),
    ("aws_sqs_queue", "exporter_failures", "count"),
]


def shape(body: dict) -> str:
    return "for_each" if "for_each" in body else "count" if "count" in body else "single"


def dynamic_blocks(body: dict, name: str, scope: Scope) -> list[dict]:
    """The evaluated blocks a `dynamic "name"` of `body` generates in `scope`."""
    blocks = []
    for block in body.get("dynamic", []):
        for block_name, spec in block.items():
            if unquote(block_name) != name:
                continue
            for item in evaluate(spec["for_each"], scope):
                blocks.append(evaluate(spec["content"][0], scope.bind(**{name: {"value": item}})))
    return blocks


def instance_scopes(key, overrides: dict) -> dict:
    """Instance key (None for a resource without for_each) -> scope, for `overrides`."""
    scope = MODULE_CONFIG.scope(overrides)
    return {instance.bindings.get("each", {}).get("key"): instance for instance in MODULE_CONFIG.instances(key, scope)}


def check_upgrade_in_place():
    """An existing single-region deployment upgrades in place: every resource it has keeps its address
    and shape (or a moved block leads from it), and with the defaults or a single region nothing else
    is created and nothing it has changes: no replica, no stream, no new setting, the same alarms."""
    problems = []
    moved_from = {re.sub(r"^\$\{|\}$", "", block["from"]) for block in MODULE_CONFIG.moved}
    for type_name, name, was in SINGLE_REGION_RESOURCES:
        body = MODULE_CONFIG.resources.get((type_name, name))
        if body is None:
            if f"{type_name}.{name}" not in moved_from:
                problems.append(f"{type_name}.{name} is gone without a moved block: upgrading would destroy it")
        elif shape(body) != was:
            problems.append(f"{type_name}.{name} changed from {was} to {shape(body)}: its instances would get new addresses")
    known = {(type_name, name) for type_name, name, _ in SINGLE_REGION_RESOURCES}
    for label, overrides in (("defaults", REQUIRED), ("a single region", {**REQUIRED, "regions": ["eu-west-1"]})):
        for key in MODULE_CONFIG.resources:
            if key not in known and instance_scopes(key, overrides):
                problems.append(f"with {label}, {key[0]}.{key[1]} is created: a single-region registry must get nothing new")
        table = MODULE_CONFIG.resources[("aws_dynamodb_table", "registry")]
        if dynamic_blocks(table, "replica", MODULE_CONFIG.scope(overrides)):
            problems.append(f"with {label}, the table gets replicas")
    single = {**REQUIRED, "regions": ["eu-west-1"]}
    def text(value) -> str:
        return plain(json.dumps(value, default=str, sort_keys=True))

    if text(module_environment(REQUIRED)) != text(module_environment(single)):
        problems.append("regions = [one region] changes the function's environment")
    if text(statements("registry")) != text(statements("registry", {"regions": ["eu-west-1"]})):
        problems.append("regions = [one region] changes the role's policy")
    if set(MODULE_CONFIG.scope(REQUIRED).local("alarms")) != set(MODULE_CONFIG.scope(single).local("alarms")):
        problems.append("regions = [one region] changes the alarms")
    if not MODULE_CONFIG.moved:
        problems.append("the moved blocks of earlier addresses are gone")
    return problems


def check_region_validations():
    """regions, home_region and ack_regions refuse what cannot work."""
    problems = []
    expectations = [
        ({"regions": REGIONS}, None),
        ({"regions": ["eu-west-1", "eu-west-1"]}, "regions"),
        ({"regions": ["Europe"]}, "regions"),
        ({"regions": REGIONS, "home_region": "us-east-1"}, "home_region"),
        ({"regions": REGIONS, "home_region": "ap-southeast-1"}, None),
        ({"regions": REGIONS, "ack_regions": ["eu-west-1"]}, "ack_regions"),  # the home itself
        ({"regions": REGIONS, "ack_regions": ["us-east-1"]}, "ack_regions"),
        ({"regions": REGIONS, "ack_regions": ["eu-central-1", "ap-southeast-1"]}, None),
        ({"ack_timeout_ms": 50}, "ack_timeout_ms"),
    ]
    problems += validation_problems([(overrides, expected, overrides) for overrides, expected in expectations])
    table = MODULE_CONFIG.resources[("aws_dynamodb_table", "registry")]
    preconditions = [p for lifecycle in table.get("lifecycle", []) for p in lifecycle.get("precondition", [])]
    if not any("var.regions[0]" in str(p.get("condition")) and "data.aws_region.current.region" in str(p.get("condition")) for p in preconditions):
        problems.append("no precondition that the first of regions is the provider's region (where the table already is)")
    return problems


def check_table_replicas():
    """A replica of the table in every further region: a global table with multi-Region eventual
    consistency (MRSC refuses TransactWriteItems), each replica with point-in-time recovery, deletion
    protection and its own region's key; the stream both images, whatever exporter_enabled says."""
    problems = []
    table = MODULE_CONFIG.resources[("aws_dynamodb_table", "registry")]
    scope = MODULE_CONFIG.scope({**MULTI_REGION, "exporter_enabled": False})
    replicas = dynamic_blocks(table, "replica", scope)
    regions = sorted(replica.get("region_name") for replica in replicas)
    if regions != sorted(REGIONS[1:]):
        problems.append(f"the table's replicas are in {regions}, expected {sorted(REGIONS[1:])}")
    for replica in replicas:
        region = replica.get("region_name")
        if replica.get("point_in_time_recovery") is not True:
            problems.append(f"the replica in {region} has no point-in-time recovery (not inherited from the table)")
        if replica.get("deletion_protection_enabled") is not True:
            problems.append(f"the replica in {region} has no deletion protection (not inherited from the table)")
        if f"aws_kms_key.replica[{region}]" not in plain(replica.get("kms_key_arn")):
            problems.append(f"the replica in {region} is not encrypted with its region's key (kms_key_arn {replica.get('kms_key_arn')})")
        if replica.get("consistency_mode", "EVENTUAL") != "EVENTUAL":
            problems.append(f"the replica in {region} asks for {replica.get('consistency_mode')}: MRSC tables refuse the transactions every registration uses")
    stream = (evaluate(table.get("stream_enabled", "false"), scope), evaluate(table.get("stream_view_type", "null"), scope))
    if stream != (True, "NEW_AND_OLD_IMAGES"):
        problems.append(f"with several regions and no exporter the table's stream is {stream}: a global table replicates through it")
    if ("aws_kms_key", "replica") not in MODULE_CONFIG.resources or set(instance_scopes(("aws_kms_key", "replica"), MULTI_REGION)) != set(REGIONS[1:]):
        problems.append("no KMS key per further region")
    else:
        key = MODULE_CONFIG.resources[("aws_kms_key", "replica")]
        for region, instance in instance_scopes(("aws_kms_key", "replica"), MULTI_REGION).items():
            if evaluate(key.get("region", "null"), instance) != region or evaluate(key.get("enable_key_rotation", "false"), instance) is not True:
                problems.append(f"the key for {region} is not in {region} with rotation on")
    return problems


# The first region's bucket configuration: every further region's bucket has each of them.
BUCKET_SETTINGS = [
    "aws_s3_bucket_versioning",
    "aws_s3_bucket_server_side_encryption_configuration",
    "aws_s3_bucket_public_access_block",
    "aws_s3_bucket_ownership_controls",
    "aws_s3_bucket_lifecycle_configuration",
    "aws_s3_bucket_policy",
]


def check_region_buckets():
    """A bucket per further region, in that region, configured as the first region's: versioning (S3
    replication needs it), SSE-KMS under the region's key, public access blocked, owner enforced, the
    same lifecycle (the ID ledger's versions kept) and the same policy (TLS only, bodies write-once)."""
    problems = []
    if set(instance_scopes(("aws_s3_bucket", "replica"), MULTI_REGION) if ("aws_s3_bucket", "replica") in MODULE_CONFIG.resources else {}) != set(REGIONS[1:]):
        return ["no bucket per further region"]
    primary_scope = MODULE_CONFIG.scope(MULTI_REGION)
    for type_name in BUCKET_SETTINGS:
        key = (type_name, "replica")
        if key not in MODULE_CONFIG.resources:
            problems.append(f"no {type_name} for the further regions' buckets")
            continue
        body, primary = MODULE_CONFIG.resources[key], MODULE_CONFIG.resources[(type_name, "bodies")]
        for region, instance in instance_scopes(key, MULTI_REGION).items():
            if evaluate(body.get("region", "null"), instance) != region:
                problems.append(f"{type_name}.replica[{region}] is not in {region}")
            if f"aws_s3_bucket.replica[{region}]" not in plain(evaluate(body["bucket"], instance)):
                problems.append(f"{type_name}.replica[{region}] configures another bucket")
            ours = {k: v for k, v in body.items() if k not in ("for_each", "region", "bucket", "policy") and not k.startswith("__")}
            theirs = {k: v for k, v in primary.items() if k not in ("bucket", "policy") and not k.startswith("__")}
            replica_text = plain(json.dumps(evaluate(ours, instance), default=str)).replace(f"aws_kms_key.replica[{region}]", "KEY")
            primary_text = plain(json.dumps(evaluate(theirs, primary_scope), default=str)).replace("aws_kms_key.registry", "KEY")
            if replica_text != primary_text:
                problems.append(f"{type_name}.replica[{region}] differs from the first region's: {replica_text} vs {primary_text}")
    # Every region's bucket policy is the instance of its region of the first region's document, whose
    # statements name that region's bucket.
    first = [{k: v for k, v in st.items() if k != "resources"} for st in statements("bodies", MULTI_REGION_OVERRIDES)]
    policies = {REGIONS[0]: evaluate(MODULE_CONFIG.resources[("aws_s3_bucket_policy", "bodies")]["policy"], primary_scope)}
    body = MODULE_CONFIG.resources[("aws_s3_bucket_policy", "replica")]
    policies.update({region: evaluate(body["policy"], instance) for region, instance in instance_scopes(("aws_s3_bucket_policy", "replica"), MULTI_REGION).items()})
    for region in REGIONS:
        bucket = "aws_s3_bucket.bodies" if region == REGIONS[0] else f"aws_s3_bucket.replica[{region}]"
        if plain(policies.get(region)) != f"data.aws_iam_policy_document.bodies[{region}].json":
            problems.append(f"the bucket policy in {region} is {plain(policies.get(region))}, not the bodies document of {region}")
            continue
        found = statements("bodies", MULTI_REGION_OVERRIDES, region)
        if [{k: v for k, v in st.items() if k != "resources"} for st in found] != first:
            problems.append(f"the bucket policy in {region} differs from the first region's (TLS only, bodies write-once)")
        if not all(plain(resource).startswith(bucket) for st in found for resource in st.get("resources", [])):
            problems.append(f"the bucket policy in {region} names another bucket than {bucket}")
    return problems


def check_replication_rules():
    """Every region's bucket replicates to every other (from the home, and back for a failback),
    KMS-encrypted objects included and re-encrypted under the destination's key, with replication
    metrics on; the replication role reads versions, writes replicas and uses the keys only via S3."""
    problems = []
    key = ("aws_s3_bucket_replication_configuration", "bodies")
    if key not in MODULE_CONFIG.resources:
        return ["no S3 replication configuration"]
    body = MODULE_CONFIG.resources[key]
    instances = instance_scopes(key, MULTI_REGION)
    if set(instances) != set(REGIONS):
        problems.append(f"replication is configured on the buckets of {sorted(instances)}, expected every region's")
    pairs = set()
    for source, instance in instances.items():
        region = evaluate(body.get("region", "null"), instance)
        if region != (None if source == REGIONS[0] else source):
            problems.append(f"the replication configuration of {source}'s bucket is managed in {region}")
        rules = dynamic_blocks(body, "rule", instance)
        if len({rule.get("priority") for rule in rules}) != len(rules):
            problems.append(f"{source}: replication rules share a priority")
        for rule in rules:
            destination = rule["destination"][0]
            target = next((r for r in REGIONS if f"[{r}]" in plain(destination.get("bucket")) or (r == REGIONS[0] and "aws_s3_bucket.bodies" in plain(destination.get("bucket")))), None)
            pairs.add((source, target))
            if rule.get("id") != f"to-{target}":
                problems.append(f"{source} -> {target}: rule id {rule.get('id')!r}, the alarms expect 'to-{target}'")
            if rule.get("status") != "Enabled":
                problems.append(f"{source} -> {target}: the rule is not enabled")
            criteria = rule.get("source_selection_criteria", [{}])[0].get("sse_kms_encrypted_objects", [{}])[0]
            if criteria.get("status") != "Enabled":
                problems.append(f"{source} -> {target}: KMS-encrypted objects (every object here) are not replicated without sse_kms_encrypted_objects")
            encryption = destination.get("encryption_configuration", [{}])[0].get("replica_kms_key_id")
            wanted_key = "aws_kms_key.registry" if target == REGIONS[0] else f"aws_kms_key.replica[{target}]"
            if wanted_key not in plain(encryption):
                problems.append(f"{source} -> {target}: replicas are not encrypted under {target}'s key ({encryption})")
            if destination.get("metrics", [{}])[0].get("status") != "Enabled":
                problems.append(f"{source} -> {target}: replication metrics are off (the latency and failure alarms read them)")
            if rule.get("delete_marker_replication", [{}])[0].get("status") != "Disabled":
                problems.append(f"{source} -> {target}: delete markers are replicated")
    wanted = {(a, b) for a in REGIONS for b in REGIONS if a != b}
    for source, target in sorted(wanted - pairs):
        problems.append(f"no replication rule from {source} to {target}")
    if "aws_s3_bucket_versioning" not in str(body.get("depends_on")):
        problems.append("the replication configuration does not depend on the buckets' versioning (S3 refuses it before)")
    if instance_scopes(key, REQUIRED):
        problems.append("a single-region registry gets a replication configuration")
    if ("aws_iam_policy_document", "replication") not in MODULE_CONFIG.data:
        return problems + ["no replication role policy"]
    found = statements("replication", MULTI_REGION_OVERRIDES)
    actions = {action for statement in found for action in statement.get("actions", [])}
    for needed in ("s3:GetReplicationConfiguration", "s3:ListBucket", "s3:GetObjectVersionForReplication", "s3:ReplicateObject", "kms:Decrypt", "kms:Encrypt"):
        if needed not in actions:
            problems.append(f"the replication role lacks {needed}")
    for forbidden in ("s3:ReplicateDelete", "s3:PutObject", "s3:DeleteObject", "s3:*", "kms:*"):
        if forbidden in actions:
            problems.append(f"the replication role has {forbidden}")
    for statement in found:
        if any(action.startswith("kms:") for action in statement.get("actions", [])):
            via = " ".join(str(v) for c in statement.get("condition", []) if c.get("variable") == "kms:ViaService" for v in c.get("values", []))
            if any(f"s3.{region}.amazonaws.com" not in via for region in REGIONS):
                problems.append("the replication role uses the keys other than through S3 in their regions (kms:ViaService)")
    return problems


def check_region_functions():
    """A function and Function URL per region, each with the multi-region settings: the home region,
    the same table name everywhere, its own region's bucket, the home's bucket, the acknowledging
    regions with their buckets and the wait; its region's replica of each secret. AWS_REGION is
    Lambda's own. A single-region function gets none of these settings."""
    problems = []
    key = ("aws_lambda_function", "replica")
    if key not in MODULE_CONFIG.resources:
        return ["no function per further region"]
    everything = {**MULTI_REGION, "jwt_issuer": "https://idp", "jwt_audience": "sr", "jwks_json": '{"keys": []}'}
    environments = {REGIONS[0]: module_environment(everything)}
    body = MODULE_CONFIG.resources[key]
    for region, instance in instance_scopes(key, everything).items():
        if evaluate(body.get("region", "null"), instance) != region:
            problems.append(f"the function for {region} is not in {region}")
        environments[region] = evaluate(body["environment"][0]["variables"], instance)
    if sorted(environments) != sorted(REGIONS):
        problems.append(f"functions in {sorted(environments)}, expected {sorted(REGIONS)}")
    primary_table = plain(environments[REGIONS[0]].get("REGISTRY_TABLE"))
    for region, environment in environments.items():
        if environment.get("REGISTRY_HOME_REGION") != "eu-central-1":
            problems.append(f"{region}: REGISTRY_HOME_REGION is {environment.get('REGISTRY_HOME_REGION')!r}, not the home region")
        if plain(environment.get("REGISTRY_TABLE")) != primary_table or "aws_dynamodb_table.registry" not in primary_table:
            problems.append(f"{region}: REGISTRY_TABLE is {environment.get('REGISTRY_TABLE')}, not the table's name (the same in every region)")
        own_bucket = "aws_s3_bucket.bodies" if region == REGIONS[0] else f"aws_s3_bucket.replica[{region}]"
        if own_bucket not in plain(environment.get("REGISTRY_BUCKET")):
            problems.append(f"{region}: REGISTRY_BUCKET is {environment.get('REGISTRY_BUCKET')}, not its region's bucket")
        if "aws_s3_bucket.replica[eu-central-1]" not in plain(environment.get("REGISTRY_HOME_BUCKET")):
            problems.append(f"{region}: REGISTRY_HOME_BUCKET is {environment.get('REGISTRY_HOME_BUCKET')}, not the home region's bucket")
        # region=bucket: the home waits for the region's replica and, in its bucket, the body.
        if plain(environment.get("REGISTRY_ACK_REGIONS")) != "ap-southeast-1=aws_s3_bucket.replica[ap-southeast-1].id":
            problems.append(f"{region}: REGISTRY_ACK_REGIONS is {environment.get('REGISTRY_ACK_REGIONS')!r}, not ack_regions with their buckets")
        if environment.get("REGISTRY_ACK_TIMEOUT_MS") != "2000":
            problems.append(f"{region}: REGISTRY_ACK_TIMEOUT_MS is {environment.get('REGISTRY_ACK_TIMEOUT_MS')!r}, not ack_timeout_ms")
        # Every region's bucket: the function follows the home marker to any of them.
        buckets = plain(environment.get("REGISTRY_REGION_BUCKETS")).split(",")
        expected = [f"{r}=aws_s3_bucket.bodies.id" if r == REGIONS[0] else f"{r}=aws_s3_bucket.replica[{r}].id" for r in REGIONS]
        if buckets != expected:
            problems.append(f"{region}: REGISTRY_REGION_BUCKETS is {buckets}, not every region's bucket ({expected})")
        if environment.get("REGISTRY_HOME_MARKER_TTL_MS") != "5000":
            problems.append(f"{region}: REGISTRY_HOME_MARKER_TTL_MS is {environment.get('REGISTRY_HOME_MARKER_TTL_MS')!r}, not home_marker_ttl_ms")
        if "AWS_REGION" in environment:
            problems.append(f"{region}: the module sets AWS_REGION, which Lambda reserves and sets itself")
        for name in ("REGISTRY_USERS_SECRET", "REGISTRY_JWKS_SECRET"):
            value = plain(environment.get(name))
            if region != REGIONS[0] and f":{region}:" not in value:
                problems.append(f"{region}: {name} is {value}, not the secret's replica in {region}")
    acks = module_environment({**MULTI_REGION, "ack_regions": []})
    if "REGISTRY_ACK_REGIONS" in acks or "REGISTRY_HOME_REGION" not in acks:
        problems.append("without ack_regions the function must get REGISTRY_HOME_REGION and no REGISTRY_ACK_REGIONS")
    if acks.get("REGISTRY_ACK_TIMEOUT_MS") != "2000":
        problems.append("without ack_regions the function must still get REGISTRY_ACK_TIMEOUT_MS (a read region waits for its own replica)")
    fixed = module_environment({**MULTI_REGION, "follow_home_marker": False})
    if "REGISTRY_REGION_BUCKETS" in fixed or "REGISTRY_HOME_MARKER_TTL_MS" in fixed or "REGISTRY_HOME_REGION" not in fixed:
        problems.append("with follow_home_marker false the function must get REGISTRY_HOME_REGION and not follow the marker")
    region_only = ("REGISTRY_HOME_REGION", "REGISTRY_HOME_BUCKET", "REGISTRY_ACK_REGIONS", "REGISTRY_ACK_TIMEOUT_MS")
    for name in (*region_only, "REGISTRY_REGION_BUCKETS", "REGISTRY_HOME_MARKER_TTL_MS"):
        if name in module_environment({**REQUIRED, "ack_timeout_ms": 500, "home_marker_ttl_ms": 900}):
            problems.append(f"a single-region function gets {name}")
    urls = MODULE_CONFIG.resources.get(("aws_lambda_function_url", "replica"))
    if not urls or set(instance_scopes(("aws_lambda_function_url", "replica"), MULTI_REGION)) != set(REGIONS[1:]):
        problems.append("no Function URL per further region")
    # The two public statements per further region with auth NONE, none with AWS_IAM.
    for auth, expected in (("NONE", 2), ("AWS_IAM", 0)):
        key = ("aws_lambda_permission", "replica_url")
        found = instance_scopes(key, {**MULTI_REGION, "url_auth_type": auth}) if key in MODULE_CONFIG.resources else {}
        for region in REGIONS[1:]:
            statements_there = [k for k in found if k.startswith(f"{region}/")]
            if len(statements_there) != expected:
                problems.append(f"url_auth_type {auth}: {len(statements_there)} invoke statements for the URL in {region}, expected {expected}")
        if auth == "NONE":
            actions = {evaluate(MODULE_CONFIG.resources[key]["action"], scope) for scope in found.values()}
            if actions != {"lambda:InvokeFunctionUrl", "lambda:InvokeFunction"}:
                problems.append(f"the further regions' public URLs get {sorted(actions)}")
    return problems


def check_region_iam():
    """The role reads every region's replica and bucket and writes only where writes may be
    committed: following the home marker (the default), every region's replica and bucket (the fence
    in the table refuses a region the marker does not name); with follow_home_marker false, the home
    region's only (a write to another replica would race the home's, last writer wins). The keys
    only via services, in every region; the logs of every region's function."""
    problems = check_region_writes(MULTI_REGION_OVERRIDES, set(REGIONS))
    problems += check_region_writes({**MULTI_REGION_OVERRIDES, "follow_home_marker": False}, {"eu-central-1"})
    found = statements("registry", MULTI_REGION_OVERRIDES)
    reads = {"dynamodb:GetItem", "dynamodb:Query", "s3:GetObject"}
    read_regions = {}
    for statement in found:
        resources = [plain(resource) for resource in statement.get("resources", [])]
        for action in statement.get("actions", []):
            if action in reads:
                read_regions.setdefault(action, set()).update(regions_named(resources))
    for action, regions in sorted(read_regions.items()):
        if regions != set(REGIONS):
            problems.append(f"{action} reaches {sorted(regions)}, not every region's replica or bucket")
    for statement in found:
        if exporter_credentials_grant(statement):
            continue
        if any(action.startswith("kms:") for action in statement.get("actions", [])) and "aws_kms_key.registry" in str(statement.get("resources")):
            via = " ".join(str(v) for c in statement.get("condition", []) if c.get("variable") == "kms:ViaService" for v in c.get("values", []))
            for region in REGIONS:
                if f"dynamodb.{region}.amazonaws.com" not in via or f"secretsmanager.{region}.amazonaws.com" not in via:
                    problems.append(f"the keys are not usable through DynamoDB and Secrets Manager in {region}")
            if not all(f"aws_kms_key.replica[{region}]" in plain(statement.get("resources")) for region in REGIONS[1:]):
                problems.append("the further regions' keys are not granted (via services)")
        if "logs:PutLogEvents" in statement.get("actions", []) and not all(f"aws_cloudwatch_log_group.replica[{region}]" in plain(statement.get("resources")) for region in REGIONS[1:]):
            problems.append("the further regions' log groups are not writable")
    auth = MODULE_CONFIG.data[("aws_iam_policy_document", "auth")]
    if "local.extra_regions" not in str(auth):
        problems.append("the role cannot read the secrets' replicas")
    secret = MODULE_CONFIG.resources[("aws_secretsmanager_secret", "auth")]
    scope = MODULE_CONFIG.scope(MULTI_REGION).bind(each={"key": "users", "value": {}})
    replicas = dynamic_blocks(secret, "replica", scope)
    if sorted(r.get("region") for r in replicas) != sorted(REGIONS[1:]) or any(f"aws_kms_key.replica[{r.get('region')}]" not in plain(r.get("kms_key_id")) for r in replicas):
        problems.append(f"the secrets are not replicated to every further region under its key: {replicas}")
    return problems


def regions_named(resources: list[str]) -> set[str]:
    """The regions of REGIONS whose replica or bucket `resources` name."""
    return {r for r in REGIONS for resource in resources if f":{r}:" in resource or f"[{r}]" in resource or (r == REGIONS[0] and "aws_s3_bucket.bodies" in resource)}


def check_region_writes(overrides: dict, expected: set[str]) -> list[str]:
    """With `overrides`, the role's writes (items, condition checks, bodies, ledger entries) reach
    exactly the replicas and buckets of the `expected` regions, each write action all of them."""
    problems = []
    writes = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem", "s3:PutObject"}
    write_regions = {}
    for statement in statements("registry", overrides):
        if statement.get("effect") == "Deny":
            continue  # grants nothing (the fence marker's deny names every replica)
        resources = [plain(resource) for resource in statement.get("resources", [])]
        for action in statement.get("actions", []):
            if action not in writes:
                continue
            for resource in resources:
                named = regions_named([resource])
                if not named <= expected:
                    problems.append(f"follow_home_marker={overrides.get('follow_home_marker', True)}: {action} is granted on {resource}, outside {sorted(expected)}")
                key = (action, "ids" if "/ids/" in resource else "schemas" if "/schemas/" in resource else "table")
                write_regions.setdefault(key, set()).update(named)
    for action in writes:
        if not any(a == action for a, _ in write_regions):
            problems.append(f"{action} is not granted")
    for (action, what), regions in sorted(write_regions.items()):
        if regions != expected:
            problems.append(f"follow_home_marker={overrides.get('follow_home_marker', True)}: {action} on {what} reaches {sorted(regions)}, not {sorted(expected)}")
    return problems


def check_replication_alarms():
    """Alarms on replication: DynamoDB's ReplicationLatency for every ordered pair of regions (in the
    sending region, per receiving region), S3's ReplicationLatency and OperationsFailedReplication for
    every rule (named as the rules are), and each further region's function errors and 5xx; each in its
    metric's region, notifying that region's topic."""
    problems = []
    topics = {"eu-central-1": "arn:aws:sns:eu-central-1:123456789012:alarms"}
    alarms = MODULE_CONFIG.scope({**MULTI_REGION, "region_alarm_sns_topic_arns": topics}).local("alarms")
    for source in REGIONS:
        for target in REGIONS:
            if source == target:
                continue
            wanted = [
                ("AWS/DynamoDB", "ReplicationLatency", {"ReceivingRegion": target}),
                ("AWS/S3", "ReplicationLatency", {"RuleId": f"to-{target}"}),
                ("AWS/S3", "OperationsFailedReplication", {"RuleId": f"to-{target}"}),
            ]
            for namespace, metric, dimensions in wanted:
                matches = [
                    alarm for alarm in alarms.values()
                    if alarm["metric"].get("namespace") == namespace and alarm["metric"].get("metric_name") == metric
                    and all(alarm["metric"].get("dimensions", {}).get(k) == v for k, v in dimensions.items())
                    and (namespace != "AWS/S3" or f"[{source}]" in plain(alarm["metric"]["dimensions"].get("SourceBucket")) or (source == REGIONS[0] and "aws_s3_bucket.bodies" in plain(alarm["metric"]["dimensions"].get("SourceBucket"))))
                    and (namespace != "AWS/DynamoDB" or alarm.get("region") == (None if source == REGIONS[0] else source))
                ]
                if len(matches) != 1:
                    problems.append(f"{len(matches)} alarms on {namespace} {metric} from {source} to {target}, expected 1")
                for alarm in matches:
                    if alarm.get("region") != (None if source == REGIONS[0] else source):
                        problems.append(f"the {metric} alarm from {source} to {target} lives in {alarm.get('region')}, not {source} (where the metric is)")
    for region in REGIONS[1:]:
        for metric in ("Url5xxCount", "Errors"):
            if not any(alarm["metric"].get("metric_name") == metric and f"aws_lambda_function.replica[{region}]" in plain(alarm["metric"].get("dimensions")) and alarm.get("region") == region for alarm in alarms.values()):
                problems.append(f"no {metric} alarm for the function in {region}")
    body = MODULE_CONFIG.resources[("aws_cloudwatch_metric_alarm", "registry")]
    scope = MODULE_CONFIG.scope({**MULTI_REGION, "region_alarm_sns_topic_arns": topics})
    for name, alarm in alarms.items():
        instance = scope.bind(each={"key": name, "value": alarm})
        if evaluate(body.get("region", "null"), instance) != alarm.get("region"):
            problems.append(f"alarm {name} is not created in its region {alarm.get('region')}")
        actions = evaluate(body["alarm_actions"], instance)
        if alarm.get("region") == "eu-central-1" and actions != [topics["eu-central-1"]]:
            problems.append(f"alarm {name} in eu-central-1 notifies {actions}, not the topic of its region")
        if alarm.get("region") == "ap-southeast-1" and actions != []:
            problems.append(f"alarm {name} in ap-southeast-1 notifies {actions}, a topic of another region")
    if "region" not in body:
        problems.append("alarms cannot be created outside the provider's region")
    # The cost estimate counts the alarms a region adds (scripts/infra_cost.py).
    sys.path.insert(0, str(ROOT / "scripts"))
    import infra_cost

    added = len(alarms) - len(MODULE_CONFIG.scope(REQUIRED).local("alarms"))
    pairs = len(REGIONS) * (len(REGIONS) - 1)
    counted = infra_cost.REGION_FUNCTION_ALARMS * (len(REGIONS) - 1) + infra_cost.REPLICATION_ALARMS_PER_PAIR * pairs
    counted += infra_cost.ACK_TIMEOUT_ALARMS_PER_REGION * len(REGIONS)  # MULTI_REGION names ack_regions
    if added != counted:
        problems.append(f"{len(REGIONS)} regions add {added} alarms, the cost estimate counts {counted} (REGION_FUNCTION_ALARMS, REPLICATION_ALARMS_PER_PAIR, ACK_TIMEOUT_ALARMS_PER_REGION)")
    # The multi-region function's own counters (registry_lambda::emf): every region but the home
    # alarms on its fallbacks to the home; with ack_regions, every region on its waits that ran out.
    home = MULTI_REGION["home_region"]
    for region in REGIONS:
        wanted = [("ReplicationAckTimeouts", True), ("HomeFallbacks", region != home)]
        for metric, expected in wanted:
            found = [alarm for alarm in alarms.values() if alarm["metric"].get("metric_name") == metric and alarm.get("region") == (None if region == REGIONS[0] else region)]
            if len(found) != int(expected):
                problems.append(f"{len(found)} {metric} alarms in {region}, expected {int(expected)}")
    without_acks = MODULE_CONFIG.scope({**MULTI_REGION, "ack_regions": []}).local("alarms")
    if any(alarm["metric"].get("metric_name") == "ReplicationAckTimeouts" for alarm in without_acks.values()):
        problems.append("ack_regions = [] still creates ReplicationAckTimeouts alarms")
    return problems



def check_exporter_regions():
    """With several regions the exporter function keeps the exporters' records where the API does:
    it is told the home region and every region's credential key, reads every region's replica,
    writes exporter items (and checks the home marker) where the API function writes (every
    replica when it follows the home marker, with the API's bucket list and time to live; the home
    region's only with follow_home_marker false), and may decrypt credentials with every region's
    key. A single-region exporter gets none of it."""
    problems = []
    found = exporter_resource("aws_lambda_function")
    if not found:
        return ["no exporter function"]
    body, _ = found
    environment = evaluate(body["environment"][0]["variables"], MODULE_CONFIG.scope(MULTI_REGION))
    home = MULTI_REGION["home_region"]
    if environment.get("REGISTRY_HOME_REGION") != home:
        problems.append(f"the exporter's REGISTRY_HOME_REGION is {environment.get('REGISTRY_HOME_REGION')!r}, not the home region")
    keys = plain(environment.get("REGISTRY_EXPORTER_KMS_KEYS"))
    wanted = ["aws_kms_key.registry"] + [f"aws_kms_key.replica[{region}]" for region in REGIONS[1:]]
    if any(key not in keys for key in wanted):
        problems.append(f"the exporter's REGISTRY_EXPORTER_KMS_KEYS is {keys!r}, not every region's key")
    single = evaluate(body["environment"][0]["variables"], MODULE_CONFIG.scope(REQUIRED))
    for name in ("REGISTRY_HOME_REGION", "REGISTRY_HOME_BUCKET", "REGISTRY_EXPORTER_KMS_KEYS"):
        if name in single:
            problems.append(f"a single-region exporter is given {name}")
    api = module_environment(MULTI_REGION)
    for name in ("REGISTRY_REGION_BUCKETS", "REGISTRY_HOME_MARKER_TTL_MS", "REGISTRY_HOME_BUCKET"):
        if name not in environment or plain(environment.get(name)) != plain(api.get(name)):
            problems.append(f"the exporter's {name} is {environment.get(name)!r}, not the API function's {api.get(name)!r}")
    fixed = evaluate(body["environment"][0]["variables"], MODULE_CONFIG.scope({**MULTI_REGION, "follow_home_marker": False}))
    if "REGISTRY_REGION_BUCKETS" in fixed or "REGISTRY_HOME_MARKER_TTL_MS" in fixed:
        problems.append("with follow_home_marker false the exporter still follows the home marker")
    for overrides, writable in ((MULTI_REGION_OVERRIDES, REGIONS), ({**MULTI_REGION_OVERRIDES, "follow_home_marker": False}, [home])):
        for statement in statements("exporter", overrides):
            resources = [plain(resource) for resource in statement.get("resources", [])]
            if statement.get("effect") != "Deny" and set(statement.get("actions", [])) & {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}:
                regions = sorted(region for region in REGIONS if any(f":{region}:" in resource for resource in resources))
                if regions != sorted(writable) or len(resources) != len(writable):
                    problems.append(f"follow_home_marker={overrides.get('follow_home_marker', True)}: statement {statement.get('sid')} writes in {resources}, not in {sorted(writable)}")
    for statement in statements("exporter", MULTI_REGION_OVERRIDES):
        resources = [plain(resource) for resource in statement.get("resources", [])]
        actions = set(statement.get("actions", []))
        if "dynamodb:Query" in actions and any(not any(f":{region}:" in resource for resource in resources) for region in REGIONS):
            problems.append(f"the exporter reads {resources}, not every region's replica (the home's records, its own source)")
        if exporter_credentials_grant(statement) and any(key not in " ".join(resources) for key in wanted):
            problems.append(f"the exporter decrypts credentials with {resources}, not every region's key")
        if statement.get("sid") == "HomeMarkerCheck":
            leading = [value for c in statement.get("condition", []) if c.get("variable") == "dynamodb:LeadingKeys" for value in c.get("values", [])]
            if actions != {"dynamodb:ConditionCheckItem"} or leading != ["HOME"]:
                problems.append(f"the home marker's statement grants {sorted(actions)} on {leading}, not only the check of HOME")
    sids = {statement.get("sid") for statement in statements("exporter", MULTI_REGION_OVERRIDES)}
    if "HomeMarkerCheck" not in sids:
        problems.append("the exporter may not check the home marker its fenced writes carry")
    if "HomeMarkerCheck" in {statement.get("sid") for statement in statements("exporter")}:
        problems.append("a single-region exporter may check the home marker (it writes unfenced)")
    return problems

CHECKS = [
    ("invoke permissions match the Function URL's auth type", check_invoke_permissions),
    ("open registry, custom domain, concurrency and name are explicit choices", check_access_choices),
    ("version floors match the features used", check_versions),
    ("every name and name prefix fits its AWS limit for the longest name", check_name_lengths),
    ("the Lambda environment matches what the function reads", check_environment),
    ("the DynamoDB throttle alarm fills missing data", check_throttle_alarm),
    ("the example's alarm topic uses a key CloudWatch may use", check_example_alarm_topic),
    ("edge caching: immutable ID answers only, and only without registry auth", check_edge_cache),
    ("every reference names something declared, every variable is used", check_references),
    ("moved blocks lead from undeclared addresses to declared instances", check_moved),
    ("the example's module calls pass the module's validations", check_example_module_calls),
    ("the example applies on a fresh account and its alarm topic can reach someone", check_example_fresh_account),
    ("the README's cost estimate matches its counts and prices, and docs/multi-region.md quotes it", check_cost_section),
    ("revocation: users and keys are read again, a JWKS change updates the function", check_revocation),
    ("a restored table can be adopted and gets PITR, deletion protection and tags back", check_restore_adoption),
    ("a missing object reads as absent (S3 answers 404 to the role)", check_missing_objects),
    ("bodies are write-once and the ID ledger keeps every version", check_write_once),
    ("memory, timeout and cache inputs are range-checked", check_ranges),
    ("system log level WARN, EMF dimensions without Status", check_log_and_metric_costs),
    ("alarms, KMS conditions and the KEK allow-list", check_alarms_and_keys),
    ("published versions and an alias to roll back with", check_rollback),
    ("the origin header CloudFront sends is the one the function requires", check_origin_header),
    ("exporter: the table's stream feeds the exporter through a bounded, bisecting, partial-failure mapping with an encrypted failure queue", check_exporter_stream),
    ("exporter: the stream filters pass rows and configs, never the exporter's own items", check_exporter_filters),
    ("exporter: a scheduled catch-up run EventBridge may invoke", check_exporter_schedule),
    ("exporter: least-privilege role (stream, reads, exporter partitions only, queue, key via services)", check_exporter_iam),
    ("the API and exporter roles may not write the home marker (the failover command's only)", check_home_marker_deny),
    ("exporter: alarms on iterator age, errors and the failure queue", check_exporter_alarms),
    ("exporter: the function starts as the stream handler with variables the Rust sources read", check_exporter_environment),
    ("regions: a single-region deployment upgrades in place (same addresses, nothing new, moved blocks kept)", check_upgrade_in_place),
    ("regions: regions, home_region and ack_regions refuse what cannot work", check_region_validations),
    ("regions: a table replica per further region with PITR, deletion protection, its key, eventual consistency", check_table_replicas),
    ("regions: a bucket per further region configured as the first", check_region_buckets),
    ("regions: S3 replication between every two regions' buckets, KMS objects included, metrics on", check_replication_rules),
    ("regions: a function and URL per region with the multi-region settings", check_region_functions),
    ("regions: the role reads every region and writes where writes may be committed (every region when following the marker, else the home only)", check_region_iam),
    ("regions: alarms on DynamoDB and S3 replication and on each region's function", check_replication_alarms),
    ("regions: the exporter keeps its records at home (env, follows the marker as the API does, writes where it writes, every region's key)", check_exporter_regions),
]


def main() -> int:
    passed = failed = 0
    for label, check in CHECKS:
        try:
            problems = check()
        except Unknown as error:
            problems = [f"the check does not understand the configuration: {error}"]
        if problems:
            failed += 1
            print(f"FAIL {label}")
            for problem in problems:
                print(f"     - {problem}")
        else:
            passed += 1
            print(f"ok   {label}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
