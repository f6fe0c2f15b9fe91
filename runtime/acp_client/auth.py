"""Authentication: the agent's advertised methods, whatever their version's shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from acp_schema import v1
from acp_schema import v2_alpha0 as v2
from msgspec import UnsetType

from acp_client.text import optional

if TYPE_CHECKING:
    from acp_client.text import Init


@dataclass
class AuthChoice:
    """An advertised authentication method, whatever its version's shape."""

    id: str
    name: str
    kind: str  # agent, terminal, env_var, or a type this client cannot run
    description: str | None = None
    args: list[str] = field(default_factory=list[str])
    env: dict[str, str] = field(default_factory=dict[str, str])
    variables: list[tuple[str, bool]] = field(
        default_factory=list[tuple[str, bool]]
    )  # (name, optional)

    def line(self) -> str:
        about = f": {self.description}" if self.description else ""
        needs = ", ".join(n for n, _ in self.variables)
        needs = f" (needs {needs})" if needs else ""
        return f"  --auth {self.id}  {self.name} [{self.kind}]{needs}{about}"


def auth_choices(init: Init) -> list[AuthChoice]:
    methods: list[v1.AuthMethod | v2.AuthMethod] = []
    if not isinstance(init.auth_methods, UnsetType):
        methods.extend(init.auth_methods)
    choices: list[AuthChoice] = []
    for m in methods:
        if isinstance(
            m, v1.AuthMethodOther | v2.AuthMethodOther
        ):  # a type unknown here
            name = m.get("name")
            choice = AuthChoice(
                str(m.get("id")), name if isinstance(name, str) else "?", m.tag
            )
            if m.tag == "env_var":  # v1 has no such type; v2's shape, read raw
                choice.variables = env_vars_of(m.get("vars"))
            choices.append(choice)
            continue
        choice = AuthChoice(m.id, m.name, "agent", optional(m.description))
        if isinstance(m, v1.AuthMethodTerminal | v2.AuthMethodTerminal):
            choice.kind = "terminal"
            choice.args = list(optional(m.args) or [])
            choice.env = dict(optional(m.env) or {})
        elif isinstance(m, v2.AuthMethodEnvVar):
            choice.kind = "env_var"
            choice.variables = [(v.name, v.optional is True) for v in m.vars]
        choices.append(choice)
    return choices


def env_vars_of(raw: object) -> list[tuple[str, bool]]:
    """(name, optional) of each well-formed entry of an ``env_var`` method's
    ``vars``, as a v1 agent sends them (codex-acp: ``[{"name": "CODEX_API_KEY"}]``)."""
    found: list[tuple[str, bool]] = []
    entries: list[object] = raw if isinstance(raw, list) else []  # pyright: ignore[reportUnknownVariableType]
    for entry in entries:
        if isinstance(entry, dict):
            fields = cast("dict[str, object]", entry)
            name = fields.get("name")
            if isinstance(name, str):
                found.append((name, fields.get("optional") is True))
    return found


# -- the application ------------------------------------------------------------------


class NeedsLogin(Exception):
    """The chosen method is a terminal login: run it, then connect again."""

    def __init__(self, choice: AuthChoice) -> None:
        super().__init__(choice.id)
        self.choice = choice
