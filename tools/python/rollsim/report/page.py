"""The HTML page: number formatting, tables, badges, figures as PNG bytes, and the page itself."""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Optional

import numpy as np


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def fmt(v, digits=4) -> str:
    if v is None:
        return "–"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    try:
        v = float(v)
    except (TypeError, ValueError):
        return html.escape(str(v))
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == 0:
        return "0"
    a = abs(v)
    if 1e-3 <= a < 1e5:
        s = f"{v:.{digits}g}"
    else:
        s = f"{v:.{max(digits - 1, 1)}e}"
        m, e = s.split("e")
        if "." in m:
            m = m.rstrip("0").rstrip(".")
        exact_power = m == "1" and abs(v / float(f"1e{int(e)}") - 1.0) < 1e-12
        s = f"10<sup>{int(e)}</sup>" if exact_power else f"{m}×10<sup>{int(e)}</sup>"
    return s.replace("-", "−")


def fmt_complex(z, digits: int = 12) -> str:
    """A root as "a", or "a ± b i" written out with the sign of its imaginary part ("a + b i", "a − b i")."""
    z = complex(z)
    re_ = f"{z.real:.{digits}g}".replace("-", "−")
    if z.imag == 0:
        return re_
    return f"{re_} {'+' if z.imag > 0 else '−'} {abs(z.imag):.{digits}g} i"


def finish_axes(ax, xlabel: str, ylabel: str, title: str, legend: Optional[dict] = None, which: str = "major"):
    """Label an axes, give it a grid (``which``: "both" for a log axis) and a small legend (``legend``: its keyword
    arguments; None: no legend)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend is not None:
        ax.legend(fontsize="x-small", **legend)
    ax.grid(True, which=which, alpha=0.3)


def count(n, noun: str, plural: str = "") -> str:
    """"1 event", "2 events": a number with its noun, plural unless the number is 1 (``plural`` for an irregular
    one)."""
    n = int(n)
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def titled(kind: str, title: str) -> str:
    """A section title "KIND: TITLE", or TITLE alone when it already begins with KIND (a scenario titled "Rolling
    disk, type B orbit" is not "Rolling disk: Rolling disk, type B orbit")."""
    return title if title.lower().startswith(kind.lower()) else f"{kind}: {title}"


def table_html(header: list, rows: list, cls: str = "data") -> str:
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f"<th>{h}</th>" for h in header]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def badge(passed: Optional[bool]) -> str:
    if passed is None:
        return '<span class="badge na">n/a</span>'
    return '<span class="badge pass">PASS</span>' if passed else '<span class="badge fail">FAIL</span>'


CSS = """
:root { --pass: #1a7f37; --fail: #cf222e; --na: #6e7781; --line: #d0d7de; --soft: #f6f8fa; --ink: #1f2328; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       background: #eef1f4; }
header { background: #24292f; color: #fff; padding: 22px 36px 18px; }
header h1 { margin: 0 0 4px; font-size: 26px; font-weight: 600; }
header .meta { color: #c9d1d9; font-size: 13px; }
header .overall { float: right; font-size: 20px; font-weight: 700; padding: 8px 18px; border-radius: 8px; }
header .overall.pass { background: var(--pass); } header .overall.fail { background: var(--fail); }
main { max-width: 1240px; margin: 0 auto; padding: 18px 24px 40px; }
section, .summary { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 16px 24px 20px;
          margin: 18px 0; box-shadow: 0 1px 2px rgba(0,0,0,.04); }
h2 { margin: 0 0 6px; font-size: 20px; display: flex; align-items: center; gap: 12px; }
h2 a.top { margin-left: auto; font-size: 12px; font-weight: 400; color: var(--na); text-decoration: none; }
h3 { font-size: 15px; margin: 18px 0 6px; color: #57606a; }
p.intro { color: #57606a; margin: 4px 0 12px; max-width: 95ch; }
p.note { color: #57606a; font-size: 13px; }
table { border-collapse: collapse; font-size: 13.5px; margin: 6px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: middle; }
th { background: var(--soft); font-weight: 600; }
table.data td { font-variant-numeric: tabular-nums; }
table.checks { width: 100%; }
table.checks td.val { font-size: 12.5px; color: #424a53; }
table.summary-table { width: 100%; }
table.summary-table td { padding: 6px 10px; }
table.summary-table tr.fail td { background: #fff0f0; }
table.summary-table img { height: 54px; border: 1px solid var(--line); border-radius: 4px; display: block; }
table.summary-table a { color: var(--ink); font-weight: 600; text-decoration: none; }
table.kv td:first-child { font-weight: 600; white-space: nowrap; }
.badge { display: inline-block; min-width: 52px; text-align: center; padding: 2px 10px; border-radius: 12px;
         font-size: 12.5px; font-weight: 700; color: #fff; letter-spacing: .04em; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.na { background: var(--na); }
figure { margin: 12px 0; }
figure img { max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
figcaption { font-size: 13px; color: #57606a; }
.bad { color: var(--fail); font-weight: 700; }
.scroll { overflow-x: auto; }
pre { background: var(--soft); padding: 10px; border-radius: 6px; font-size: 12px; overflow-x: auto; }
code { font-size: 12.5px; word-break: break-all; }
p.anim { font-size: 13px; margin: 0 0 10px; color: #57606a; }
.counts { font-size: 14px; margin: 4px 0 10px; }
"""

SCRIPT = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img');
  var ok = 0;
  for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; }
  var tables = document.querySelectorAll('table').length;
  document.body.setAttribute('data-images-total', String(imgs.length));
  document.body.setAttribute('data-images-decoded', String(ok));
  document.body.setAttribute('data-tables', String(tables));
  document.title = document.title + ' [images ' + ok + '/' + imgs.length + ', tables ' + tables + ']';
});
"""


def render(sections: list, version: str, started: str, seconds: float) -> str:
    checks = [(s, c) for s in sections for c in s.checks]
    n_pass = sum(c.passed is True for _, c in checks)
    n_fail = sum(c.passed is False for _, c in checks)
    n_na = sum(c.passed is None for _, c in checks)
    overall = n_fail == 0 and n_pass > 0
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>rollsim validation report: {'PASS' if overall else 'FAIL'}</title>",
           f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>"]
    out.append(f'<header><span class="overall {"pass" if overall else "fail"}">{"ALL PASS" if overall else "FAIL"}'
               f"</span><h1>rollsim validation report</h1>"
               f'<div class="meta">{html.escape(version)} · {html.escape(started)} · {seconds:.1f} s · '
               f"{n_pass} passed, {n_fail} failed" + (f", {n_na} not applicable" if n_na else "") + "</div></header>")
    out.append("<main>")
    # Summary
    out.append('<div class="summary" id="summary"><h2>Summary</h2>')
    rows = []
    for s in sections:
        thumb = (f'<a href="#{s.key}"><img alt="{html.escape(s.figures[0][0])}" '
                 f'src="data:image/png;base64,{base64.b64encode(s.figures[0][1]).decode()}"></a>'
                 if s.figures else "")
        for i, c in enumerate(s.checks):
            cls = ' class="fail"' if c.passed is False else ""
            first = i == 0
            cells = []
            if first:
                span = f' rowspan="{len(s.checks)}"' if len(s.checks) > 1 else ""
                cells.append(f'<td{span}><a href="#{s.key}">{s.title}</a></td>')
                cells.append(f"<td{span}>{thumb}</td>")
            cells += [f"<td>{c.name}</td>", f"<td>{c.tolerance}</td>", f'<td class="val">{c.value}</td>',
                      f"<td>{badge(c.passed)}</td>"]
            rows.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    out.append('<table class="summary-table checks"><thead><tr><th>section</th><th>figure</th><th>check</th>'
               "<th>tolerance</th><th>value</th><th>result</th></tr></thead><tbody>" + "".join(rows)
               + "</tbody></table></div>")
    for s in sections:
        out.append(f'<section id="{s.key}"><h2>{s.title} {badge(s.passed)}<a class="top" href="#summary">'
                   "↑ summary</a></h2>")
        if s.intro:
            out.append(f'<p class="intro">{s.intro}</p>')
        out.append(s.animation)
        if s.checks:
            out.append(table_html(["check", "tolerance", "value", "result"],
                                  [[c.name, c.tolerance, f'<span class="val">{c.value}</span>', badge(c.passed)]
                                   for c in s.checks], cls="checks"))
        for cap, data in s.figures:
            out.append(f'<figure><img alt="{html.escape(cap)}" src="data:image/png;base64,'
                       f'{base64.b64encode(data).decode()}"><figcaption>{html.escape(cap)}</figcaption></figure>')
        out += s.body
        out.append("</section>")
    out.append("</main></body></html>")
    return "\n".join(out)
