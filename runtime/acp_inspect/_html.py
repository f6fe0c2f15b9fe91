"""The HTML timeline: one self-contained page (inline CSS, no script, no network).

Each case (or a trace) is a table of its messages in time order: when, which
way (client to agent on the left, agent to client on the right), a one-line
summary (method, id, stop reason, error code), the rules the line broke,
and the whole line folded under it.
"""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING, Any

import msgspec

from ._message import as_obj

if TYPE_CHECKING:
    from ._check import CheckReport
    from ._trace import TraceRecord

__all__ = ["check_html", "summarize", "trace_html"]

#: Characters of a line shown unfolded.
LINE_SHOWN = 4000

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1b1b}
h1{font-size:1.4em} h2{font-size:1.1em;margin:1.6em 0 .3em}
.badge{display:inline-block;min-width:3.2em;text-align:center;border-radius:3px;padding:0 .4em;color:#fff;font-weight:600}
.pass{background:#1a7f37}.fail{background:#cf222e}.na{background:#6e7781}
.cite{font-family:ui-monospace,monospace;color:#0550ae}
.quote{color:#57606a;font-style:italic}
table{border-collapse:collapse;width:100%;margin:.4em 0 1em}
td,th{border-bottom:1px solid #d0d7de;padding:2px 6px;vertical-align:top;text-align:left}
td.t{font-family:ui-monospace,monospace;color:#57606a;white-space:nowrap;width:6em}
td.dir{white-space:nowrap;width:7em;font-weight:600}
tr.to_agent td.dir{color:#0550ae} tr.from_agent td.dir{color:#8250df} tr.note td{color:#57606a;font-style:italic}
tr.bad{background:#ffebe9}
.finding{color:#cf222e;font-weight:600}
details summary{cursor:pointer} pre{white-space:pre-wrap;word-break:break-all;margin:.2em 0;font-size:12px}
.summary td{border:none;padding:0 1em 0 0}
"""


def summarize(text: str | bytes) -> str:
    """One line for a message: ``session/prompt #3``, ``#3 -> stopReason cancelled``."""
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return "(not JSON)"
    if isinstance(value, list):
        return f"batch of {len(value)}"  # pyright: ignore[reportUnknownArgumentType]
    obj = as_obj(value)
    if not obj:
        return "(not an object)"
    ident = f" #{obj['id']}" if "id" in obj else ""
    method = obj.get("method")
    if isinstance(method, str):
        params = as_obj(obj.get("params"))
        extra = ""
        update = as_obj(params.get("update"))
        if "sessionUpdate" in update:
            extra = f" {update['sessionUpdate']}"
        return f"{method}{ident}{extra}"
    if "error" in obj:
        error = as_obj(obj.get("error"))
        return f"error{ident}: {error.get('code')} {str(error.get('message', ''))[:80]}"
    result = as_obj(obj.get("result"))
    if "stopReason" in result:
        return f"result{ident}: stopReason {result['stopReason']}"
    keys = ", ".join(list(result)[:4])
    return f"result{ident}" + (f": {keys}" if keys else "")


def _row(
    t: float, direction: str | None, text: str, findings: list[str], label: str = ""
) -> str:
    """A timeline row; ``label``: the summary of a line cut in ``text``."""
    arrow = {"to_agent": "client &rarr;", "from_agent": "&larr; agent"}.get(
        direction or "", "note"
    )
    cls = direction or "note"
    bad = " bad" if findings else ""
    if direction is None:
        body = html.escape(text)
    else:
        shown = text if len(text) <= LINE_SHOWN else text[:LINE_SHOWN] + " ..."
        body = (
            f"<details><summary>{html.escape(label or summarize(text))}</summary>"
            f"<pre>{html.escape(shown)}</pre></details>"
        )
    notes = "".join(f'<div class="finding">{html.escape(f)}</div>' for f in findings)
    return (
        f'<tr class="{cls}{bad}"><td class="t">{t * 1000:.1f} ms</td>'
        f'<td class="dir">{arrow}</td><td>{body}{notes}</td></tr>'
    )


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def _badge(status: str) -> str:
    cls = {"pass": "pass", "fail": "fail"}.get(status, "na")
    return f'<span class="badge {cls}">{html.escape(status.upper())}</span>'


def check_html(report: CheckReport) -> str:
    """The conformance report: a summary table, then each case's timeline."""
    data = report.to_json()
    s = data["summary"]
    parts = [
        "<h1>acp-inspect conformance report</h1>",
        f"<p>{report.peer.capitalize()}: <code>{html.escape(' '.join(report.command))}</code>; protocol {report.protocol}; "
        f"{s['pass']} passed, {s['fail']} failed, {s['n/a']} not applicable"
        + ("; <strong>MUST violations found</strong>" if s["must_failed"] else "")
        + "</p>",
        '<table class="summary">',
    ]
    for case in data["cases"]:
        parts.append(
            f'<tr><td>{_badge(case["status"])}</td><td><a href="#{case["case"]}">{html.escape(case["case"])}</a></td>'
            f'<td>{case["level"]}</td><td class="cite">{html.escape(case["cite"])}</td></tr>'
        )
    parts.append("</table>")
    for case in data["cases"]:
        parts.append(_case(case, report.peer))
    return _page("acp-inspect report", "".join(parts))


def _case(case: dict[str, Any], peer: str = "agent") -> str:
    out = [
        f'<h2 id="{html.escape(case["case"])}">{_badge(case["status"])} {html.escape(case["case"])}: '
        f"{html.escape(case['title'])}</h2>",
        f'<div>{case["level"]} <span class="cite">{html.escape(case["cite"])}</span> '
        f'<span class="quote">&ldquo;{html.escape(case["quote"])}&rdquo;</span></div>',
    ]
    if case["detail"]:
        out.append(f"<p>{html.escape(case['detail'])}</p>")
    by_rule = {f["rule"]: f for f in case["findings"]}
    out.append("<table>")
    for e in case["timeline"]:
        notes = [
            f"{by_rule[r]['level']} {by_rule[r]['cite']} [{r}] {by_rule[r]['text']}"
            for r in e["findings"]
            if r in by_rule
        ]
        out.append(_row(e["t"], e["dir"], e["text"], notes, e.get("label", "")))
    out.append("</table>")
    if case["stderr"]:
        out.append(
            f"<details><summary>{peer} {'stderr' if peer == 'agent' else 'output'}</summary><pre>{html.escape(case['stderr'])}</pre></details>"
        )
    return "".join(out)


def trace_html(trace: TraceRecord | list[TraceRecord], name: str) -> str:
    """A proxy trace as timelines, its findings at their lines: one section
    per run (a proxy appends each run to the same file)."""
    runs = trace if isinstance(trace, list) else [trace]
    parts = [
        f"<h1>acp-inspect trace</h1><p>{html.escape(name)}: {len(runs)} run"
        + ("s" if len(runs) != 1 else "")
        + "</p>"
    ]
    for number, run in enumerate(runs, 1):
        parts.append(_run(run, number))
    return _page(f"acp-inspect trace {name}", "".join(parts))


def _run(trace: TraceRecord, number: int) -> str:
    by_line: dict[int, list[str]] = {}
    for f in trace.findings:
        times = f" (x{f['count']} on this line)" if f.get("count", 1) > 1 else ""
        by_line.setdefault(int(f.get("n", 0)), []).append(
            f"{f.get('level')} {f.get('cite')} [{f.get('rule')}] {f.get('text')}{times}"
        )
    rows: list[tuple[float, str]] = []
    for line in trace.lines:
        rows.append(
            (line.t, _row(line.t, line.dir, line.text, by_line.pop(line.n, [])))
        )
    for t, event in trace.events:
        rows.append((t, _row(t, None, event, [])))
    for notes in by_line.values():  # findings of the end (unanswered requests)
        for note in notes:
            rows.append(
                (
                    float("inf"),
                    f'<tr class="note bad"><td class="t"></td><td class="dir">end</td><td><div class="finding">{html.escape(note)}</div></td></tr>',
                )
            )
    rows.sort(key=lambda r: r[0])
    command = " ".join(str(c) for c in trace.header.get("command", []))
    started = trace.header.get("started")
    when = (
        time.strftime(" %Y-%m-%d %H:%M:%S UTC", time.gmtime(started))
        if isinstance(started, int | float)
        else ""
    )
    return (
        f'<h2 id="run-{number}">run {number}{when}</h2><p><code>{html.escape(command)}</code>; '
        f"{len(trace.lines)} lines, {len(trace.findings)} findings</p>"
        "<table>" + "".join(r for _, r in rows) + "</table>"
    )
