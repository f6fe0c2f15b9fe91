"""The spec lines the rules and the conformance cases check.

Each :class:`SpecRef` names a sentence of the protocol documentation (the
upstream ``acp-docs`` pages of the schema versions in ``spec/``): the page,
its line in each protocol version's docs, the requirement level and a short
quote.  What no spec line says but real clients got wrong (``check-client``)
cites the reported bug: its address, and the bug in a few words.  A few JSON-RPC rules the ACP pages only inherit are cited from the
JSON-RPC 2.0 specification by section (``line`` 0).  The quotes are checked
against a copy of the pages (``tests/fixtures/acp-docs``) by the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["DOCS_SCHEMA", "JSONRPC", "REFS", "Level", "SpecRef", "stale_docs_note"]

Level = Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT"]

#: Where the JSON-RPC 2.0 rules are cited from.
JSONRPC: Final = "https://www.jsonrpc.org/specification"


#: The schema version of the docs the lines are counted in
#: (``tests/fixtures/acp-docs/vN``), per protocol version.
DOCS_SCHEMA: Final = {1: "1.21.0", 2: "2.0.0-alpha.0"}


def stale_docs_note(version: int, schema_version: str) -> str | None:
    """What an output says when it cites the docs of another schema than the
    one spoken (``schema_version``, a generated module's ``SCHEMA_VERSION``):
    those docs are not in the repository, the lines are the nearest there
    are. None when they are the docs of that schema."""
    docs = DOCS_SCHEMA.get(version)
    if docs is None or docs == schema_version:
        return None
    return (
        f"note: protocol v{version} is spoken as schema {schema_version}, whose "
        f"docs are not in the repository: the v{version}/... lines cited are "
        f"those of the {docs} docs"
    )


@dataclass(frozen=True, slots=True)
class SpecRef:
    """One requirement of the spec: ``doc`` (a page of ``acp-docs/vN/`` or
    :data:`JSONRPC`), ``lines`` (its line per protocol version; a version
    missing has no such sentence), ``level`` and ``quote`` (a fragment of
    the sentence, as written on that line)."""

    key: str
    doc: str
    lines: tuple[tuple[int, int], ...]
    level: Level
    quote: str
    section: str = ""

    @property
    def reported(self) -> bool:
        """Whether it cites a reported bug (a GitHub issue or pull request),
        not a spec line."""
        return self.doc.startswith("https://github.com/")

    def line(self, version: int) -> int | None:
        """The line of the sentence in ``version``'s docs (or the nearest
        version that has it); ``None`` for a JSON-RPC section."""
        found = dict(self.lines)
        if version in found:
            return found[version]
        return next(iter(found.values()), None)

    def cite(self, version: int = 1) -> str:
        """``v1/prompt-turn.mdx:332`` (or ``JSON-RPC 2.0 §5 Response object``,
        or ``owner/repo#N`` for a reported bug)."""
        if self.doc == JSONRPC:
            return f"JSON-RPC 2.0 {self.section}"
        if self.reported:
            owner, repo, _, number = self.doc.split("/")[3:7]
            return f"{owner}/{repo}#{number}"
        found = dict(self.lines)
        v = version if version in found else next(iter(found))
        return f"v{v}/{self.doc}:{found[v]}"

    def is_must(self) -> bool:
        """Whether breaking it is a MUST violation (the exit status)."""
        return self.level.startswith("MUST")


def _ref(
    key: str,
    doc: str,
    level: Level,
    quote: str,
    v1: int | None = None,
    v2: int | None = None,
    section: str = "",
) -> SpecRef:
    lines = tuple((v, n) for v, n in ((1, v1), (2, v2)) if n is not None)
    return SpecRef(key, doc, lines, level, quote, section)


_ALL = [
    # transports
    _ref("agent-stdout-only-acp", "transports.mdx", "MUST NOT",
         "The agent **MUST NOT** write anything to its `stdout` that is not a valid ACP message", 26, 27),
    _ref("client-stdin-only-acp", "transports.mdx", "MUST NOT",
         "The client **MUST NOT** write anything to the agent's `stdin` that is not a valid ACP message", 27, 28),
    _ref("no-embedded-newlines", "transports.mdx", "MUST NOT",
         "and **MUST NOT** contain embedded newlines", 24, 25),
    _ref("close-stdin-terminate", "transports.mdx", "SHOULD",
         "Client->>Agent Process: Close stdin, terminate subprocess", 40, 41),
    _ref("batch-nonempty", "transports.mdx", "MUST",
         "The batch **MUST** be an array with at least one value", v2=57),
    _ref("batch-respond-array", "transports.mdx", "SHOULD",
         "The receiver **SHOULD** respond with an array containing the corresponding", v2=62),
    _ref("no-reply-to-notification", "transports.mdx", "MUST NOT",
         "The receiver **MUST NOT** reply to a Notification", v2=66),
    # JSON-RPC 2.0, inherited
    _ref("jsonrpc-parse-error", JSONRPC, "MUST",
         "Invalid JSON was received by the server", section="§5.1 Error object (-32700)"),
    _ref("jsonrpc-invalid-request", JSONRPC, "MUST",
         "The JSON sent is not a valid Request object", section="§5.1 Error object (-32600)"),
    _ref("jsonrpc-response-id", JSONRPC, "MUST",
         "It MUST be the same as the value of the id member in the Request Object",
         section="§5 Response object"),
    _ref("jsonrpc-batch", JSONRPC, "SHOULD",
         "The Server should respond with an Array containing the corresponding Response objects",
         section="§6 Batch"),
    _ref("jsonrpc-response-required", JSONRPC, "MUST",
         "When a rpc call is made, the Server MUST reply with a Response",
         section="§5 Response object"),
    # initialization
    _ref("initialize-first", "initialization.mdx", "MUST",
         "Before a Session can be created, Clients **MUST** initialize the connection", 24, 26),
    _ref("initialize-response", "initialization.mdx", "MUST",
         "The Agent **MUST** respond with the chosen [protocol version]", 54, 50),
    _ref("version-negotiation", "initialization.mdx", "MUST",
         "If the Agent supports the requested version, it **MUST** respond with the same version", 96, 94),
    _ref("omitted-capabilities-unsupported", "initialization.mdx", "MUST",
         "Clients and Agents **MUST** treat all capabilities omitted", 106, 104),
    # "may advertise ... only when": no keyword, a restriction: read as SHOULD
    _ref("terminal-auth-needs-capability", "authentication.mdx", "SHOULD",
         "An Agent may advertise a", 127),
    _ref("prompt-after-setup", "prompt-turn.mdx", "MUST",
         "Before sending prompts, Clients **MUST** first complete", 8, 8),
    # sessions
    _ref("session-id", "session-setup.mdx", "MUST",
         "The Agent **MUST** respond with a unique [Session ID]", 71, 72),
    _ref("load-needs-capability", "session-setup.mdx", "MUST NOT",
         "Clients **MUST NOT** attempt to call `session/load`", 104, 107),
    _ref("load-replays", "session-setup.mdx", "MUST",
         "The Agent **MUST** replay the entire conversation", 134, 138),
    _ref("load-answers-after-replay", "session-setup.mdx", "MUST",
         "the Agent **MUST** respond to the original `session/load` request", 178, 188),
    _ref("resume-needs-capability", "session-setup.mdx", "MUST NOT",
         "Clients **MUST NOT** attempt to call `session/resume`", 213, 223),
    _ref("resume-no-replay", "session-setup.mdx", "MUST NOT",
         "the Agent **MUST NOT** replay the conversation history", 243, 254),
    _ref("close-needs-capability", "session-setup.mdx", "MUST NOT",
         "Clients **MUST NOT** attempt to call `session/close`", 278, 290),
    _ref("close-cancels", "session-setup.mdx", "MUST",
         "The Agent **MUST** cancel any ongoing work for that session", 299, 311),
    _ref("additional-directories-need-capability", "session-setup.mdx", "MUST",
         "Clients **MUST** only send `additionalDirectories`", 344, 356),
    _ref("mcp-transport-needs-capability", "session-setup.mdx", "MUST",
         "Clients **MUST** verify the Agent's capabilities during initialization", 522, 492),
    _ref("list-needs-capability", "session-list.mdx", "MUST NOT",
         "Clients **MUST NOT** attempt to call `session/list`", 54, 54),
    _ref("delete-needs-capability", "session-delete.mdx", "MUST NOT",
         "Clients **MUST NOT** attempt to call `session/delete`", 52, 52),
    _ref("list-response", "session-list.mdx", "MUST",
         "The Agent **MUST** respond with a list of sessions", 94, 94),
    _ref("absolute-paths", "overview.mdx", "MUST",
         "All file paths in the protocol **MUST** be absolute.", 214, 140),
    # client methods
    _ref("fs-needs-capability", "file-system.mdx", "MUST NOT",
         "the Agent **MUST NOT** attempt to call the corresponding", 28),
    _ref("terminal-needs-capability", "terminals.mdx", "MUST NOT",
         "the Agent **MUST NOT** attempt to call any terminal methods", 25),
    _ref("elicitation-mode-needs-capability", "elicitation.mdx", "MUST NOT",
         "Agents **MUST NOT** request a mode the Client has not advertised", 54),
    _ref("elicitation-outcomes-handled", "elicitation.mdx", "MUST",
         "They **MUST** handle", 151),
    # prompt turn
    _ref("prompt-content-capabilities", "prompt-turn.mdx", "MUST",
         "Clients **MUST** restrict types of content according to the [Prompt Capabilities]", 92, 93),
    _ref("turn-ends-with-response", "prompt-turn.mdx", "MUST",
         "the turn ends and the Agent **MUST** respond to the original `session/prompt`", 217, 299),
    _ref("permission-cancelled-on-cancel", "prompt-turn.mdx", "MUST",
         "The Client **MUST** respond to all pending `session/request_permission`", 328, 435),
    _ref("cancel-stops-tools", "prompt-turn.mdx", "SHOULD",
         "it **SHOULD** stop all language model requests and all tool call invocations as soon as possible", 330, 437),
    _ref("cancelled-stop-reason", "prompt-turn.mdx", "MUST",
         "the Agent **MUST** respond to the original `session/prompt` request with the `cancelled`", 332, 439),
    _ref("updates-before-response", "prompt-turn.mdx", "MUST",
         "it **MUST** ensure that it does so before responding", 343, 450),
    _ref("message-id", "prompt-turn.mdx", "MUST",
         "The Agent **MUST** include an opaque `messageId`", v2=198),
    # extensibility, cancellation
    _ref("unknown-method", "extensibility.mdx", "SHOULD",
         "it should respond with the standard \"Method not found\" error", 80, 80),
    _ref("ignore-unknown-notifications", "extensibility.mdx", "SHOULD",
         "implementations **SHOULD** ignore unrecognized notifications", 109, 109),
    _ref("cancel-request-answered", "cancellation.mdx", "MUST",
         "**MUST** send one of these responses for the original request", 20),
    # what a client does (check-client)
    # "`optionId` - The ID of the selected permission option": a definition, read as MUST
    _ref("permission-option-offered", "tool-calls.mdx", "MUST",
         "`optionId` - The ID of the selected permission option", 185),
    _ref("permission-cancelled-outcome", "tool-calls.mdx", "MUST",
         "the Client **MUST** respond with the `\"cancelled\"` outcome", 168),
    _ref("accept-updates-after-cancel", "prompt-turn.mdx", "SHOULD",
         "The Client **SHOULD** still accept tool call updates received after sending", 345),
    _ref("fs-write-creates", "file-system.mdx", "MUST",
         "The Client **MUST** create the file if it doesn't exist.", 100),
    # "The `terminal/release` kills the command if still running": a definition, read as MUST
    _ref("terminal-release-kills", "terminals.mdx", "MUST",
         "The `terminal/release` kills the command if still running", 265),
    _ref("terminal-truncate-boundary", "terminals.mdx", "MUST",
         "The Client **MUST** ensure truncation happens at a character boundary", 85),
    _ref("elicitation-content-schema", "elicitation.mdx", "SHOULD",
         "For an accepted form elicitation, `content` **SHOULD**", 147),
    # reported bugs: what real clients got wrong where no spec line says it
    _ref("bug-fs-outside-workspace", "https://github.com/plmbr/notebook-intelligence/pull/419", "SHOULD",
         "served fs/read_text_file and fs/write_text_file by opening whatever path the agent sent",
         section="reported bug"),
    _ref("bug-unknown-update-variant", "https://github.com/RyderFreeman4Logos/cli-sub-agent/issues/2585", "SHOULD",
         "an unknown sessionUpdate variant failed the client's session", section="reported bug"),
    _ref("bug-agent-died-mid-turn", "https://github.com/clawbench-dev/clawbench/pull/280", "SHOULD",
         "when the agent process dies the pending prompt hangs indefinitely", section="reported bug"),
]  # fmt: skip

#: Every reference by key.
REFS: Final[dict[str, SpecRef]] = {ref.key: ref for ref in _ALL}
